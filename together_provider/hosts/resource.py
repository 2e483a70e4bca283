"""The program side of both hosts: what a kind's resource sends and knows before the API answers
(`input_props`, `set_program_attributes`), and the dynamic host's Resource base that the generated
classes (`together_provider.resources`) derive from."""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import weakref
from typing import Any, ClassVar

import pulumi
from pulumi.dynamic import Resource

from together_provider.extensions import ID, ProgramExtension
from together_provider.framework.kind import PACKAGE, Kind
from together_provider.hosts.dynamic import provider_class

_NONE: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, pulumi.Output[None]] = (
    weakref.WeakKeyDictionary()
)


def _none_output() -> pulumi.Output[None]:
    """One output resolving to None per event loop, shared by every unset input's attribute (it
    has no value, no secret and no dependency to tell them apart), made once, not per property."""
    loop = asyncio.get_event_loop()
    found = _NONE.get(loop)
    if found is None:
        found = _NONE[loop] = pulumi.Output.from_input(None)
    return found


def unset_inputs(kind: Kind, args: Any) -> tuple[str, ...]:
    """The inputs `args` leaves unset whose value stays None whatever the provider does (no
    default, not the name input, which the provider fills from the resource name)."""
    return tuple(
        f.name
        for f in kind.schema.inputs
        if f.default is None and not f.names_resource and getattr(args, f.name) is None
    )


def input_props(kind: Kind, args: Any) -> dict[str, Any]:
    """The program's `args` as the properties a host sends: every input that is set or that
    the provider may fill, and every output. An input left unset with no default is not sent
    (the engine stores no None anyway): each property costs the program an output to resolve,
    and a Cluster has a dozen optional API fields most programs never set; its attribute is an
    output resolving to None all the same (`set_program_attributes`)."""
    # Not dataclasses.asdict: it deep-copies, and Outputs must be passed through untouched.
    unset = set(unset_inputs(kind, args))
    props: dict[str, Any] = {
        f.name: getattr(args, f.name) for f in dataclasses.fields(args) if f.name not in unset
    }
    props.update(dict.fromkeys(kind.schema.output_names))
    return props


def set_program_attributes(kind: Kind, resource: pulumi.CustomResource, args: Any) -> None:
    """What both hosts' resources know in the program already, as the kind declares it:
    its `flags` (e.g. `has_volume`, which the workload helpers read) and `known_at_preview`."""
    unset = unset_inputs(kind, args)
    if unset:
        nothing = _none_output()
        for name in unset:
            # Where the SDK keeps a property's output (both hosts read `__dict__`).
            resource.__dict__[name] = nothing
    program = kind.get(ProgramExtension) or ProgramExtension()
    for flag, field in program.flags.items():
        setattr(resource, flag, getattr(args, field) is not None)
    for output, source in program.known_at_preview.items():
        value = resource.id if source == ID else pulumi.Output.from_input(getattr(args, source))
        setattr(resource, output, value)


class Attributes:
    """The base of each kind's generated `<Kind>Attributes` (`together_provider.resources`): its
    typed inputs and outputs, declared once for the resources of both hosts."""


def own_attributes(cls: type) -> dict[str, Any]:
    """The annotations of `cls`'s `Attributes` bases, as `cls`'s own. Pulumi types a resource's
    outputs (the engine's 8.0 becomes 8) from the class's *own* annotations only
    (`inspect.get_annotations`, not the MRO), so the shared ones are copied onto each resource."""
    merged: dict[str, Any] = {}
    for base in reversed(cls.__mro__[1:]):
        if issubclass(base, Attributes) and base is not Attributes:
            merged.update(inspect.get_annotations(base))
    return {**merged, **inspect.get_annotations(cls)}


class DynamicResource(Resource):
    """A kind's resource on the dynamic host; a subclass names its kind (`kind=`). The generated
    classes (`together_provider.resources`) add only the typed signature and outputs."""

    kind: ClassVar[Kind]

    def __init_subclass__(cls, *, kind: Kind, **kwargs: Any) -> None:
        super().__init_subclass__(module=PACKAGE, name=kind.type_name, **kwargs)
        cls.kind = kind
        cls.__annotations__ = own_attributes(cls)

    def __init__(
        self, resource_name: str, args: Any, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        kind = self.kind
        props = input_props(kind, args)
        for spec_field in kind.schema.inputs:
            if spec_field.names_resource and props[spec_field.name] is None:
                props[spec_field.name] = resource_name
        if kind.schema.secret_outputs:
            secret = pulumi.ResourceOptions(
                additional_secret_outputs=list(kind.schema.secret_outputs)
            )
            opts = pulumi.ResourceOptions.merge(secret, opts)
        super().__init__(provider_class(kind)(), resource_name, props, opts)
        set_program_attributes(kind, self, args)
