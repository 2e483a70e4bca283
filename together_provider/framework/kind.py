"""What describes one resource kind, so the hosts, docs, exports and features are derived from the
registry's `Kind`s instead of naming kinds by hand."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from together_provider.framework.rulebook import Rulebook
from together_provider.framework.schema import Schema

if TYPE_CHECKING:
    from together_provider.framework.lifecycle import LifecycleType
    from together_provider.preview.kinds import KindPreview

__all__ = ["ID", "PACKAGE", "Attach", "Kind", "StackExport"]

PACKAGE: Final = "together"
"""The Pulumi package (and dynamic-type module) every kind is published under."""

ID: Final = "id"
"""A `known_at_preview` source: the resource's own id."""


@dataclass(frozen=True)
class Attach:
    """A stack-config setting naming a resource of another kind by its key (a cluster's
    `volume: <key>`): it fills `props` from that resource, so the engine orders the two."""

    key: str
    """The setting (`volume`)."""
    target: str
    """The attached kind's `config_key` (`volumes`)."""
    props: Mapping[str, str]
    """This kind's property -> the attached resource's output or input it is set from
    (`volume_id` <- `volume_id`, `volume_region` <- `region`). An input is known before the
    attached resource exists, so stack config checks it at once; an output is not."""
    checked: str
    """The property whose rule failure stack config words as the attachment's problem."""
    against: str
    """The own property `checked` must equal (`region`)."""


@dataclass(frozen=True)
class StackExport:
    """One `pulumi.export` of the stack program per resource of a kind: `key` is formatted
    with the resource's `name`, `value` reads the resource's outputs."""

    key: str
    value: Callable[[Any], Any]
    secret: bool = False


@dataclass(frozen=True, eq=False)
class Kind:
    """One resource kind. `type_name` is its Pulumi type name (`Cluster`): the native token
    `together:index:<type_name>`, the dynamic type `pulumi-python:dynamic/together:<type_name>`,
    the exported classes `<type_name>` and `<type_name>Args` (generated into
    `together_provider.resources` and `.native.resources`) and the dynamic provider
    `together_provider.registry.<type_name>Provider` all follow from it.

    Cheap to import: its field table and rules are pure, and its lifecycle (httpx, pydantic) is
    named by path (`package`, `lifecycle_class`) and loaded on first use, so a preview loads
    neither."""

    type_name: str
    package: str
    """The kind's subpackage (`together_provider.cluster`), which holds `lifecycle`."""
    schema: Schema[Any]
    rulebook: Rulebook[Any]
    lifecycle_class: str
    """The class in `<package>.lifecycle` that fits `framework.lifecycle.Lifecycle`."""
    config_key: str
    """The stack config's map of these resources (`clusters`)."""
    docs_marker: str
    """Its generated tables' marker prefix (`<prefix>rules-table`, `<prefix>fields-table`)."""
    native_notes: str
    """Said after the table's docstring in the native package schema's description."""
    doc: str
    """What the resource is and what a change does: the generated Args' and classes' docstring."""
    stack_required: str | None = field(default=None, kw_only=True)
    """Stack config must declare at least one: the example its error shows
    (`clusters.train.numGpus 8`); None: optional."""
    stack_defaults: frozenset[str] | None = field(default=None, kw_only=True)
    """The properties it takes from stack config's `defaults` when it does not set them;
    None: every default (the `defaults` keys are the union of what the kinds take)."""
    attaches: tuple[Attach, ...] = field(default=(), kw_only=True)
    """Its stack-config settings that attach a resource of another kind."""
    stack_exports: tuple[StackExport, ...] = field(default=(), kw_only=True)
    """What the stack program exports for each of its resources."""
    preview_class: str | None = field(default=None, kw_only=True)
    """The class in `<package>.preview` that reads and renders its changes in a PR comment
    (`together_provider.preview.kinds.KindPreview`), built with the kind; None: the comment
    shows none of them (they still count in the engine's change summary)."""
    flags: Mapping[str, str] = field(default_factory=dict, kw_only=True)
    """Booleans of the program's resource and Args: name -> the input whose being set makes it
    true (`has_volume`: `volume_id`), known when the program runs even while the value is not."""
    known_at_preview: Mapping[str, str] = field(default_factory=dict, kw_only=True)
    """Outputs both hosts' resources set in the program, so they are known at preview: output ->
    `ID` (the resource's id) or the input it always equals."""

    @property
    def token(self) -> str:
        """The native plugin's resource token."""
        return f"{PACKAGE}:index:{self.type_name}"

    @property
    def dynamic_type(self) -> str:
        """The dynamic resource's type in the state and in `pulumi preview --json`."""
        return f"pulumi-python:dynamic/{PACKAGE}:{self.type_name}"

    @property
    def exports(self) -> tuple[str, str]:
        """The names `together_provider` exports for it: the resource and its args."""
        return self.type_name, f"{self.type_name}Args"

    @property
    def description(self) -> str:
        return (self.schema.spec_type.__doc__ or "").strip() + " " + self.native_notes

    @property
    def named_after_resource(self) -> str:
        """The input that defaults to the resource's name in the program."""
        return next(f.name for f in self.schema.inputs if f.names_resource)

    @property
    def provider_name(self) -> str:
        """Its dynamic provider's class name, under `together_provider.registry` (pickled)."""
        return f"{self.type_name}Provider"

    def module(self, name: str) -> Any:
        """`<package>.<name>`, imported on first use (`lifecycle`)."""
        return importlib.import_module(f"{self.package}.{name}")

    def preview(self) -> KindPreview:
        """Its PR-comment reader and renderer, imported on first use (`preview_class` set)."""
        if self.preview_class is None:
            raise ValueError(f"{self.type_name} declares no preview_class")
        preview: KindPreview = getattr(self.module("preview"), self.preview_class)(self)
        return preview

    def lifecycle(self) -> LifecycleType:
        """The lifecycle class; loads httpx and pydantic, so only apply paths call it."""
        lifecycle_type: LifecycleType = getattr(self.module("lifecycle"), self.lifecycle_class)
        return lifecycle_type
