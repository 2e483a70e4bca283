"""A resource's fields are declared once, like a Terraform schema; its spec types, policies,
config keys, outputs and docs are derived here from that one table. No Pulumi import."""

from __future__ import annotations

import dataclasses
import difflib
import enum
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Generic, TypeVar

from together_facts.errors import SpecError
from together_provider.framework.fields import (
    InputField,
    OutputField,
    Policy,
    input_field,
    output_field,
    read_inputs,
    read_outputs,
)
from together_provider.framework.validators import Invalid

UNKNOWN: Final = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
"""Pulumi's wire sentinel for a value that is only known after apply (pulumi.runtime.rpc)."""


class Unknown(enum.Enum):
    """Marks a draft value Pulumi will only know after apply; the rules treat it conservatively."""

    VALUE = "<unknown>"

    def __repr__(self) -> str:
        return "<unknown>"


def without_host_keys(props: Mapping[str, Any]) -> dict[str, Any]:
    """`props` without the host's bookkeeping keys (those starting with `__`, e.g. `__provider`)."""
    return {k: v for k, v in props.items() if not k.startswith("__")}


def is_unknown(value: object) -> bool:
    """True for the wire sentinel, a `pulumi.output.Unknown` object, or `Unknown.VALUE`.

    `pulumi.output.Unknown` is recognised by its type's name and module, so no Pulumi import.
    """
    if value is Unknown.VALUE:
        return True
    if isinstance(value, str):
        return value == UNKNOWN
    kind = type(value)
    return kind.__name__ == "Unknown" and kind.__module__.startswith("pulumi")


@dataclass(frozen=True)
class Failure:
    """One rejected property; a host turns it into its check failure (e.g. pulumi CheckFailure)."""

    field: str
    reason: str


S = TypeVar("S")


class Draft(Generic[S]):
    """The possibly-unknown spec of `check` and `diff`: each field is an attribute holding its
    value or `Unknown.VALUE` (not known until apply, or it failed to parse). Read-only."""

    def __init__(self, values: Mapping[str, Any]) -> None:
        vars(self).update(values)

    if TYPE_CHECKING:
        # For the type checker only: which fields a draft holds is the table's, so any name
        # reads as a value. At run time each field is a plain attribute (no hook).
        def __getattr__(self, name: str) -> Any: ...

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"a Draft is read-only: {name}")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Draft) and vars(self) == vars(other)

    def __hash__(self) -> int:
        # A nested object (a dict or list field) is unhashable itself; its repr is stable.
        return hash(repr(sorted(vars(self).items(), key=lambda kv: kv[0])))

    def __repr__(self) -> str:
        return f"Draft({vars(self)!r})"

    def values(self) -> Mapping[str, Any]:
        return dict(vars(self))

    @classmethod
    def of(cls, spec: S | Draft[S]) -> Draft[S]:
        """A resolved spec seen as a draft with nothing unknown (no parse: it already is one)."""
        if isinstance(spec, Draft):
            return spec
        return cls(dict(_values(spec)))


@dataclass(frozen=True)
class Stored(Generic[S]):
    """A resource's recorded state as update, read and delete start from it, parsed once
    (`Schema.stored`).

    `inputs` is a draft: a value missing or unreadable in older state is `Unknown.VALUE`, which
    the plan never counts as a replacement. `outputs` are the last known computed outputs: what
    an update that asks Together nothing (or learns only part of the object) carries forward.
    `recorded` are the inputs as the state holds them, unparsed: what a refresh echoes back
    (so it changes nothing it did not read), empty for an import (the engine knows the id only).
    """

    inputs: Draft[S]
    outputs: dict[str, Any]
    recorded: dict[str, Any] = dataclasses.field(default_factory=dict)


@dataclass(frozen=True)
class Span:
    """A count with its declared range (`input_field(ceiling=...)`), parsed as the rules parse
    it: `floor` is the count, `ceiling` the top of its range; None where not known (not known
    until apply, or not a count: 8.5 is none), and `ceiling` None too when no range is declared.
    `ranged`: a ceiling is set, known or not."""

    floor: int | None
    ceiling: int | None
    ranged: bool

    @property
    def top(self) -> int | None:
        """The most it may reach without a diff: a declared range's ceiling, else the count."""
        return self.ceiling if self.ranged else self.floor


class Schema(Generic[S]):
    """Everything derived from one resource's table (a frozen dataclass of `input_field(...)`s,
    one of `output_field(...)`s): every consumer's view of it.

    `parse` gives the *possibly-unknown* draft check and diff work on (a value Pulumi only knows
    after apply, or one that failed to parse, is `Unknown.VALUE`); `resolve` the *resolved* spec a
    host builds once per create or update, raising `SpecError` instead of holding an unknown, so
    apply paths never test; `stored` the previous state an update starts from. Adding a field is
    one entry in the table; a second resource declares its own table and `Schema` the same way."""

    def __init__(self, noun: str, spec: type[S], outputs: type) -> None:
        self.noun = noun
        self.spec_type = spec
        self.inputs: tuple[InputField, ...] = tuple(read_inputs(spec))
        self.outputs: tuple[OutputField, ...] = tuple(read_outputs(outputs))
        self.by_name: Mapping[str, InputField] = {f.name: f for f in self.inputs}
        self.input_names: tuple[str, ...] = tuple(self.by_name)
        self.output_names: tuple[str, ...] = tuple(f.name for f in self.outputs)
        self.secret_outputs: tuple[str, ...] = tuple(f.name for f in self.outputs if f.secret)
        self.policies: Mapping[str, Policy] = {f.name: f.policy for f in self.inputs}
        self.identity_fields: tuple[InputField, ...] = tuple(
            f for f in self.inputs if f.policy is Policy.REPLACE and f.live
        )
        self.live_fields: tuple[InputField, ...] = tuple(
            f for f in self.inputs if f.policy is Policy.IN_PLACE and f.live
        )
        self.config_keys: Mapping[str, str] = {
            f.config_key: f.name for f in self.inputs if f.config_key
        }
        self.ranges: Mapping[str, str] = {f.name: f.ceiling for f in self.inputs if f.ceiling}
        """Declared ranges, floor field -> ceiling field (`input_field(ceiling=...)`)."""
        for floor, ceiling in self.ranges.items():
            if ceiling not in self.by_name or not self.by_name[floor].live:
                raise TypeError(f"{floor}: ceiling={ceiling!r} needs a ceiling field and live=")

    # ------------------------------------------------------------------ parsing

    def parse(self, props: Mapping[str, Any]) -> tuple[Draft[S], list[Failure]]:
        """Parse every field; a field that fails holds `Unknown.VALUE` so the rules check the
        rest. Keys starting with `__` and output names are ignored; anything else unknown is a
        failure naming the closest field. The draft is only safe to act on with no failures."""
        failures = [
            self._unknown_key(key)
            for key in props
            if not key.startswith("__") and key not in self.by_name and key not in self.output_names
        ]
        values: dict[str, Any] = {}
        for spec_field in self.inputs:
            values[spec_field.name] = _parse_field(spec_field, props.get(spec_field.name), failures)
        return Draft(values), failures

    def spans(self, props: Mapping[str, Any]) -> dict[str, Span]:
        """Each count with a declared range (`ranges`), floor field -> its `Span`, parsed by the
        fields' own validators and nothing else: the one reading of counts and ranges for every
        consumer of raw properties (the PR preview, the policy pack), so none truncates or
        re-pairs them by hand."""
        found: dict[str, Span] = {}
        for floor, ceiling in self.ranges.items():
            low = _parse_field(self.by_name[floor], props.get(floor), [])
            high = _parse_field(self.by_name[ceiling], props.get(ceiling), [])
            found[floor] = Span(_known(low), _known(high), ranged=high is not None)
        return found

    def stored(self, props: Mapping[str, Any]) -> Stored[S]:
        """The recorded state (a host's `olds`: the previous outputs, every input echoed) parsed
        once; host keys and anything the table does not declare are ignored, never failures."""
        state = without_host_keys(props)
        recorded = {k: v for k, v in state.items() if k in self.by_name}
        outputs = {k: v for k, v in state.items() if k in self.output_names}
        return Stored(self.parse(recorded)[0], outputs, recorded)

    def live_draft(self, spec: S, live: Any) -> Draft[S]:
        """`spec` with its in-place fields (`live=`) as the live object has them: the old side
        of adoption's plan, so adoption asks the same rules as an update from the live values.
        Only the live values are parsed; the spec already is."""
        values = dict(Draft.of(spec).values())
        for spec_field in self.live_fields:
            raw = getattr(live, spec_field.live or spec_field.name)
            values[spec_field.name] = _parse_field(spec_field, raw, [])
        return Draft(values)

    def resolve(self, props: Mapping[str, Any]) -> S:
        """The resolved spec of checked properties; `SpecError` on a failure or an unknown."""
        draft, failures = self.parse(props)
        if failures:
            first = failures[0]
            raise SpecError(f"{first.field}: {first.reason}", field=first.field)
        for name, value in draft.values().items():
            if value is Unknown.VALUE:
                raise SpecError(
                    f"{name} was still unknown when the engine applied the change", field=name
                )
        return self.spec_type(**draft.values())

    def _unknown_key(self, key: str) -> Failure:
        close = difflib.get_close_matches(key, self.input_names, n=1)
        if close:
            return Failure(key, f"unknown property {key!r}; did you mean {close[0]!r}?")
        valid = ", ".join(self.input_names)
        return Failure(key, f"unknown property {key!r}; valid properties: {valid}")

    # ------------------------------------------------------------------ views

    def to_props(self, spec: S | Draft[S]) -> dict[str, Any]:
        """The plain dict a host stores: ints as ints, unknowns as the wire sentinel, unset
        optional fields left out (the engine drops None values anyway)."""
        props: dict[str, Any] = {}
        for name, value in _values(spec):
            if value is None:
                continue
            if value is Unknown.VALUE:
                props[name] = UNKNOWN
            elif isinstance(value, float) and value.is_integer():
                props[name] = int(value)
            else:
                props[name] = value
        return props

    def request_body(self, spec: S) -> dict[str, Any]:
        """The create request's fields: every wired input that is set (and not an omitted
        default), under its wire name."""
        body: dict[str, Any] = {}
        for spec_field in self.inputs:
            value = getattr(spec, spec_field.name)
            if spec_field.wire is None or value is None:
                continue
            if spec_field.omit_default and value == spec_field.default:
                continue
            body[spec_field.wire] = value
        return body

    def outputs_of(self, live: Any) -> dict[str, Any]:
        """Every computed output from the live API object; one that is None (not applicable to
        this object) is left out, so it costs the state nothing."""
        found = {f.name: f.source(live) for f in self.outputs}
        return {name: value for name, value in found.items() if value is not None}

    def live_inputs(self, previous: Mapping[str, Any], live: Any) -> dict[str, Any]:
        """The inputs as the API sees them now: in-place fields read back, so drift shows.

        With no previous input (an import: the engine knows only the id), every input the API
        reports (`live=`) is read from the live object; unset ones are left to their defaults.
        """
        inputs = {k: v for k, v in previous.items() if k in self.by_name and not k.startswith("__")}
        if not inputs:
            found = {f.name: getattr(live, f.live) for f in self.inputs if f.live}
            return {name: value for name, value in found.items() if value not in ("", None)}
        inputs.update({f.name: getattr(live, f.live) for f in self.live_fields if f.live})
        return inputs

    def with_live_ranges(self, inputs: Mapping[str, Any], live: Any) -> dict[str, Any]:
        """`inputs` with each floor whose ceiling is set replaced by its live value: what the
        outputs echo, so the next diff knows where the live value is even without a refresh."""
        echoed = dict(inputs)
        for floor, ceiling in self.ranges.items():
            if echoed.get(ceiling) is not None:
                echoed[floor] = getattr(live, self.by_name[floor].live or floor)
        return echoed

    def identity_mismatches(self, spec: S, live: Any) -> list[str]:
        """Replace fields where a live object differs from the spec, as `field: a != b`."""
        found = []
        for spec_field in self.identity_fields:
            wanted = getattr(spec, spec_field.name)
            have = getattr(live, spec_field.live or spec_field.name) or ""
            if wanted is not None and str(wanted) != str(have):
                found.append(
                    f"{spec_field.name}: {self.noun} has {str(have)!r}, spec has {str(wanted)!r}"
                )
        return found

    def policy_wording(self, policy: Policy) -> str:
        return policy.value.format(noun=self.noun)


def _parse_field(spec_field: InputField, raw: Any, failures: list[Failure]) -> Any:
    """One field's parsed value, or `Unknown.VALUE` (unknown, or failed: appended to `failures`)."""
    name = spec_field.name
    if spec_field.optional and raw == "":
        raw = None  # an empty optional text is "not set", as if the key were absent
    if raw is None:
        if spec_field.required:
            example = f", e.g. {name}={spec_field.example}" if spec_field.example else ""
            failures.append(Failure(name, f"{name} is required; set it{example}"))
            return Unknown.VALUE
        return spec_field.default
    if _holds_unknown(raw):
        return Unknown.VALUE
    try:
        return spec_field.validator(name, raw)
    except Invalid as invalid:
        failures.append(Failure(name, invalid.reason))
        return Unknown.VALUE


def _holds_unknown(raw: Any) -> bool:
    """Unknown itself, or a nested object (dict or list) with an unknown anywhere inside: the
    whole field is then not known until apply."""
    if isinstance(raw, Mapping):
        return any(_holds_unknown(v) for v in raw.values())
    if isinstance(raw, list | tuple):
        return any(_holds_unknown(v) for v in raw)
    return is_unknown(raw)


def _known(value: Any) -> Any:
    return None if value is Unknown.VALUE else value


def _values(spec: Any) -> Iterator[tuple[str, Any]]:
    if isinstance(spec, Draft):
        yield from spec.values().items()
    else:
        for f in dataclasses.fields(spec):
            yield f.name, getattr(spec, f.name)


__all__ = [
    "UNKNOWN",
    "Draft",
    "Failure",
    "InputField",
    "OutputField",
    "Policy",
    "Schema",
    "Span",
    "Stored",
    "Unknown",
    "input_field",
    "is_unknown",
    "output_field",
    "without_host_keys",
]
