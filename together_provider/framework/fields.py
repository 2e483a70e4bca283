"""How a resource's field table is written: one dataclass field per entry, whose `input_field` /
`output_field` default carries what the annotation and default cannot (policy, why, wire name...),
read back into the views `schema.Schema` derives everything from. No Pulumi, no pydantic."""

from __future__ import annotations

import dataclasses
import enum
import operator
import re
import types
import typing
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from together_provider.framework import validators
from together_provider.framework.validators import Validator


class Policy(enum.Enum):
    """What changing a field does to the live resource; the value is the reference's wording."""

    IN_PLACE = "updates in place"
    REPLACE = "replaces the {noun}"
    LOCAL = "updates in place, no API call"


@dataclass(frozen=True)
class _Input:
    policy: Policy
    why: str
    doc: str
    example: str
    validator: Validator | None
    wire: str | None
    live: str | None
    config: bool
    per_resource: bool
    names_resource: bool
    omit_default: bool
    ceiling: str | None
    put: Callable[[Any, Any], Any] | None


@dataclass(frozen=True)
class _Output:
    doc: str
    source: Callable[[Any], Any] | None
    secret: bool


_KEY: Final = "together_provider.framework.fields"
_SAME: Final = "<same name>"


def input_field(
    policy: Policy,
    why: str,
    doc: str,
    *,
    default: Any = dataclasses.MISSING,
    example: str = "",
    validator: Validator | None = None,
    wire: str | None = _SAME,
    live: str | None = None,
    config: bool = True,
    per_resource: bool = False,
    names_resource: bool = False,
    omit_default: bool = False,
    ceiling: str | None = None,
    put: Callable[[Any, Any], Any] | None = None,
) -> Any:
    """Declare one input of a resource's table (used as a dataclass field's default).

    `policy`/`why`: what a change does and why (its reference row). `validator`: field-local parse,
    else one derived from the annotation. `wire`: the request field (default: the same name;
    `None`: never sent, e.g. a provider-only setting). `live`: the attribute of the live API
    object holding this value, read back for drift (in-place fields) or checked at adoption
    (replace fields). `config`: settable from stack config (key: camelCase name).
    `per_resource`: identifies one resource, so stack-config `defaults` may not set it.
    `names_resource`: defaults to the resource's name. `omit_default`: not sent at its default.
    `ceiling`: the field that, when set, makes this one a floor: the live value (`live=`) may
    then move anywhere in [this, ceiling] without a diff, and one outside is brought back to the
    nearest bound (a declared range, as an autoscaler next to infrastructure as code needs).
    `put(old, new)`: what an in-place change sends in the update request (default: the new
    value), e.g. only the add-ons whose config changed.
    """
    meta = _Input(
        policy,
        why,
        doc,
        example,
        validator,
        None if policy is Policy.LOCAL and wire == _SAME else wire,
        live,
        config,
        per_resource,
        names_resource,
        omit_default,
        ceiling,
        put,
    )
    return dataclasses.field(default=default, metadata={_KEY: meta})


def ready_timeout_field(why: str, doc: str) -> Any:
    """`ready_timeout_seconds`, the same setting on every resource: provider-only, positive
    seconds, 30 minutes by default (Pulumi's customTimeouts do not reach dynamic providers)."""
    return input_field(Policy.LOCAL, why, doc, default=1800.0, validator=validators.seconds)


def adopt_id_field(noun: str) -> Any:
    """`adopt_<noun>_id`, the same contract on every resource: read only at create, where the
    lifecycle takes the existing resource over instead of creating one."""
    return input_field(
        Policy.LOCAL,
        f"only read at create; later edits never re-adopt, create or delete a {noun}",
        f"Take over this existing {noun} at create instead of creating one.",
        default=None,
        per_resource=True,
    )


def output_field(
    doc: str, *, source: Callable[[Any], Any] | None = None, secret: bool = False
) -> Any:
    """Declare one computed output: `source(live)` (default: the live attribute of this name)."""
    return dataclasses.field(default=None, metadata={_KEY: _Output(doc, source, secret)})


@dataclass(frozen=True)
class InputField:
    """One input as the schema sees it: the declaration plus its resolved type and default."""

    name: str
    annotation: Any
    required: bool
    default: Any
    policy: Policy
    why: str
    doc: str
    example: str
    validator: Validator
    wire: str | None
    live: str | None
    config_key: str | None
    per_resource: bool
    names_resource: bool
    omit_default: bool
    optional: bool
    ceiling: str | None = None
    put: Callable[[Any, Any], Any] | None = None


@dataclass(frozen=True)
class OutputField:
    name: str
    annotation: Any
    doc: str
    source: Callable[[Any], Any]
    secret: bool


def without_none(annotation: Any) -> tuple[Any, bool]:
    """`X | None` -> (X, True); anything else -> (it, False)."""
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        args = tuple(a for a in typing.get_args(annotation) if a is not type(None))
        if len(args) < len(typing.get_args(annotation)):
            return (args[0] if len(args) == 1 else typing.Union[args]), True  # noqa: UP007
    return annotation, False


def _validator_for(annotation: Any) -> Validator:
    if typing.get_origin(annotation) is Literal:
        return validators.choice(tuple(str(a) for a in typing.get_args(annotation)))
    found: Mapping[Any, Validator] = {
        str: validators.text,
        int: validators.whole,
        float: validators.seconds,
        bool: validators.flag,
    }
    if annotation not in found:
        raise TypeError(f"no default validator for {annotation!r}; pass validator=")
    return found[annotation]


def to_camel(name: str) -> str:
    """`num_gpus` -> `numGpus`: the stack-config spelling of a property."""
    return re.sub(r"_([a-z0-9])", lambda m: m.group(1).upper(), name)


M = typing.TypeVar("M", "_Input", "_Output")


def _declared(
    table: type, kind: type[M], maker: str
) -> Iterator[tuple[dataclasses.Field[Any], M, Any]]:
    """Each field of a table with its declaration and resolved type; a field declared any other
    way than with `maker` is a mistake in the table, said at import."""
    hints = typing.get_type_hints(table)
    for f in dataclasses.fields(table):
        meta = f.metadata.get(_KEY)
        if not isinstance(meta, kind):
            raise TypeError(f"{table.__name__}.{f.name} is not declared with {maker}()")
        yield f, meta, hints[f.name]


def read_inputs(spec: type) -> Iterator[InputField]:
    """The `InputField` views of a table class, one per dataclass field, in declaration order."""
    for f, meta, hint in _declared(spec, _Input, "input_field"):
        base, optional = without_none(hint)
        required = f.default is dataclasses.MISSING
        yield InputField(
            name=f.name,
            annotation=hint,
            required=required,
            default=None if required else f.default,
            policy=meta.policy,
            why=meta.why,
            doc=meta.doc,
            example=meta.example,
            validator=meta.validator or _validator_for(base),
            wire=f.name if meta.wire == _SAME else meta.wire,
            live=meta.live,
            config_key=to_camel(f.name) if meta.config else None,
            per_resource=meta.per_resource,
            names_resource=meta.names_resource,
            omit_default=meta.omit_default,
            optional=optional,
            ceiling=meta.ceiling,
            put=meta.put,
        )


def read_outputs(outputs: type) -> Iterator[OutputField]:
    for f, meta, hint in _declared(outputs, _Output, "output_field"):
        source = meta.source or operator.attrgetter(f.name)
        yield OutputField(f.name, hint, meta.doc, source, meta.secret)
