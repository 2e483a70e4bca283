"""Turn the raw property dict Pulumi hands a dynamic provider into a typed `ClusterSpec`.

Why a separate step: the engine sends every number as a float (`8` arrives as `8.0`), drops keys
whose value is None, passes values computed by other resources as *unknown* during preview, and
forwards typos such as `num_gpu` without complaint. This module absorbs all of that once, so the
rules (`rules.py`) see whole ints, applied defaults and an explicit `Unknown.VALUE` marker.

What a caller can rely on:
- A whole float count becomes an int; `8.5`, a bool or the string `"8"` is a failure, never coerced.
- An unknown value is kept as `Unknown.VALUE` and is never rejected for being unknown.
- Only field-local checks live here (types, required keys, enum values, ranges); rules that relate
  fields or compare against the previous inputs live in `rules.py`.
- Failure reasons leave out the resource name: `rules.validate` prefixes it.

No Pulumi import: `UNKNOWN` repeats the wire sentinel, and `is_unknown` recognises Pulumi's
`pulumi.output.Unknown` objects by their type, which is how the dynamic provider host actually
delivers unknowns to `check` and `diff`.
"""

from __future__ import annotations

import difflib
import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any, Final, TypeVar

from together_api.errors import SpecError
from together_api.wire import (
    BILLING_TYPES,
    CLUSTER_TYPES,
    GPU_TYPES,
    GPUS_PER_NODE,
    BillingType,
    ClusterType,
    GpuType,
)

UNKNOWN: Final = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
"""Pulumi's wire sentinel for a value that is only known after apply (pulumi.runtime.rpc)."""

NODE_GPUS: Final = GPUS_PER_NODE
"""GPUs per Together node: counts are multiples of this, and a cluster needs one standard node."""


class Unknown(enum.Enum):
    """Marks a spec value Pulumi will only know after apply; the rules treat it conservatively."""

    VALUE = "<unknown>"

    def __repr__(self) -> str:
        return "<unknown>"


@dataclass(frozen=True)
class Failure:
    """One rejected property; the provider turns it into a pulumi CheckFailure."""

    field: str
    reason: str


@dataclass(frozen=True)
class ClusterSpec:
    """The checked inputs of one cluster: `num_gpus` counts standard GPUs only."""

    cluster_name: str | Unknown
    region: str | Unknown
    gpu_type: GpuType | Unknown
    num_gpus: int | Unknown
    cuda_version: str | Unknown
    nvidia_driver_version: str | Unknown
    num_preemptible_gpus: int | Unknown = 0
    cluster_type: ClusterType | Unknown = "KUBERNETES"
    billing_type: BillingType | Unknown = "ON_DEMAND"
    duration_days: int | Unknown | None = None
    project_id: str | Unknown | None = None
    volume_id: str | Unknown | None = None
    ready_timeout_seconds: float | Unknown = 1800.0
    adopt_cluster_id: str | Unknown | None = None


INPUT_FIELDS: Final[tuple[str, ...]] = tuple(f.name for f in fields(ClusterSpec))
"""Every input property, in declaration order (required ones first)."""


def is_unknown(value: object) -> bool:
    """True for the wire sentinel, a `pulumi.output.Unknown` object, or `Unknown.VALUE`."""
    if value is Unknown.VALUE:
        return True
    if isinstance(value, str):
        return value == UNKNOWN
    kind = type(value)
    return kind.__name__ == "Unknown" and kind.__module__.startswith("pulumi")


class _Invalid(Exception):
    """Internal: one field failed; `reason` is the user-facing text."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _show(value: object) -> str:
    return repr(value) if isinstance(value, str) else str(value)


def _text(name: str, raw: object) -> str:
    if not isinstance(raw, str):
        raise _Invalid(f"{name}={_show(raw)} is a {type(raw).__name__}; expected a string")
    if not raw.strip():
        raise _Invalid(f"{name}={raw!r} is empty; set it to a non-empty string")
    return raw


def _whole(name: str, raw: object, what: str, example: int) -> int:
    """Accept an int or a whole float (the engine's 8.0); reject bools, strings and fractions."""
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        hint = " (drop the quotes)" if isinstance(raw, str) else ""
        raise _Invalid(
            f"{name}={_show(raw)} is a {type(raw).__name__}; {what} is a whole number "
            f"such as {example}{hint}"
        )
    if isinstance(raw, float) and not raw.is_integer():
        raise _Invalid(
            f"{name}={raw} is not a whole number; {what} is a whole number such as {example}"
        )
    return int(raw)


def _count(name: str, raw: object) -> int:
    value = _whole(name, raw, "a GPU count", NODE_GPUS)
    if value < 0:
        raise _Invalid(f"{name}={value} is negative; GPU counts are 0 or more, in multiples of 8")
    return value


def _days(name: str, raw: object) -> int:
    value = _whole(name, raw, "a reservation length in days", 7)
    if not 1 <= value <= 90:
        raise _Invalid(f"{name}={value} is out of range; Together reserves 1 to 90 days (1..90)")
    return value


def _seconds(name: str, raw: object) -> float:
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        raise _Invalid(
            f"{name}={_show(raw)} is a {type(raw).__name__}; expected seconds, e.g. 1800"
        )
    if raw <= 0:
        raise _Invalid(f"{name}={raw} must be > 0; set a positive number of seconds, e.g. 1800")
    return float(raw)


def _choice(valid: tuple[str, ...]) -> Callable[[str, object], str]:
    """A parser for one of the wire schema's enum values (`wire.GPU_TYPES` and friends)."""

    def parse(name: str, raw: object) -> str:
        if isinstance(raw, str) and raw in valid:
            return raw
        close = difflib.get_close_matches(str(raw).upper(), valid, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise _Invalid(
            f"{name}={_show(raw)} is not a valid value; {hint}use one of {', '.join(valid)}"
        )

    return parse


@dataclass(frozen=True)
class _Field:
    parse: Callable[[str, object], Any]
    required: bool
    example: str = ""


_FIELDS: Final[Mapping[str, _Field]] = {
    "cluster_name": _Field(_text, True, "'train'"),
    "region": _Field(_text, True, "'us-central-8'"),
    "gpu_type": _Field(_choice(GPU_TYPES), True, "'H100_SXM'"),
    "num_gpus": _Field(_count, True, "8"),
    "cuda_version": _Field(_text, True, "'12.6'"),
    "nvidia_driver_version": _Field(_text, True, "'560'"),
    "num_preemptible_gpus": _Field(_count, False),
    "cluster_type": _Field(_choice(CLUSTER_TYPES), False),
    "billing_type": _Field(_choice(BILLING_TYPES), False),
    "duration_days": _Field(_days, False),
    "project_id": _Field(_text, False),
    "volume_id": _Field(_text, False),
    "ready_timeout_seconds": _Field(_seconds, False),
    "adopt_cluster_id": _Field(_text, False),
}

_OPTIONAL_TEXT: Final = frozenset({"project_id", "volume_id", "adopt_cluster_id"})


def _unknown_key(key: str) -> Failure:
    close = difflib.get_close_matches(key, INPUT_FIELDS, n=1)
    if close:
        return Failure(key, f"unknown property {key!r}; did you mean {close[0]!r}?")
    return Failure(key, f"unknown property {key!r}; valid properties: {', '.join(INPUT_FIELDS)}")


def normalise_partial(props: Mapping[str, Any]) -> tuple[ClusterSpec, list[Failure]]:
    """Parse every field; a field that fails holds `Unknown.VALUE` so the rules can check the rest.

    The spec is only safe to act on when the failure list is empty.
    """
    failures = [
        _unknown_key(key) for key in props if not key.startswith("__") and key not in _FIELDS
    ]
    values: dict[str, Any] = {}
    for name, spec_field in _FIELDS.items():
        raw = props.get(name)
        if name in _OPTIONAL_TEXT and raw == "":
            raw = None  # an empty optional id means "not set", as if the key were absent
        if raw is None:
            if spec_field.required:
                failures.append(
                    Failure(name, f"{name} is required; set it, e.g. {name}={spec_field.example}")
                )
                values[name] = Unknown.VALUE
            continue  # the dataclass default applies
        if is_unknown(raw):
            values[name] = Unknown.VALUE
            continue
        try:
            values[name] = spec_field.parse(name, raw)
        except _Invalid as invalid:
            failures.append(Failure(name, invalid.reason))
            values[name] = Unknown.VALUE
    return ClusterSpec(**values), failures


def normalise(props: Mapping[str, Any]) -> tuple[ClusterSpec | None, list[Failure]]:
    """Parse the raw properties: `(spec, [])` when well formed, else `(None, failures)`."""
    spec, failures = normalise_partial(props)
    return (None, failures) if failures else (spec, [])


def to_props(spec: ClusterSpec) -> dict[str, Any]:
    """The normalised plain dict that check returns and create/update echo as outputs.

    Counts are ints, unknowns the wire sentinel; unset optional keys are left
    out, as the engine drops None values anyway.
    """
    props: dict[str, Any] = {}
    for name in INPUT_FIELDS:
        value = getattr(spec, name)
        if value is None:
            continue
        if value is Unknown.VALUE:
            props[name] = UNKNOWN
        elif isinstance(value, float) and value.is_integer():
            props[name] = int(value)
        else:
            props[name] = value
    return props


_T = TypeVar("_T")


def require_known(name: str, value: _T | Unknown) -> _T:
    """A value the engine has resolved. `create` and `update` never receive unknowns, so one here
    is a bug to report, not a value to send to Together."""
    if value is Unknown.VALUE or is_unknown(value):
        raise SpecError(f"{name} was still unknown when the engine applied the change", field=name)
    return value
