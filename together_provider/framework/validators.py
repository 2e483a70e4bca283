"""Field-local validators for a resource's field table: one value in, the typed value or `Invalid`.
Strict, because the engine sends every number as a float (`8` arrives as `8.0`): a whole float
becomes an int, but `8.5`, a bool or the string `"8"` is a failure with a fix, never coerced."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any, Final

from together_facts.values import GPUS_PER_NODE

Validator = Callable[[str, object], Any]
"""(field name, raw value) -> the parsed value; raises `Invalid` with the user-facing reason."""

NODE_GPUS: Final = GPUS_PER_NODE
"""GPUs per Together node: counts are multiples of this, and a cluster needs one standard node."""


class Invalid(Exception):
    """One field failed; `reason` is the user-facing text. It names the field and the value and
    leaves out the resource: the caller prefixes it."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def show(value: object) -> str:
    return repr(value) if isinstance(value, str) else str(value)


def text(name: str, raw: object) -> str:
    if not isinstance(raw, str):
        raise Invalid(f"{name}={show(raw)} is a {type(raw).__name__}; expected a string")
    if not raw.strip():
        raise Invalid(f"{name}={raw!r} is empty; set it to a non-empty string")
    return raw


def whole(name: str, raw: object, what: str = "a number", example: int = 1) -> int:
    """Accept an int or a whole float (the engine's 8.0); reject bools, strings and fractions."""
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        hint = " (drop the quotes)" if isinstance(raw, str) else ""
        raise Invalid(
            f"{name}={show(raw)} is a {type(raw).__name__}; {what} is a whole number "
            f"such as {example}{hint}"
        )
    if isinstance(raw, float) and not raw.is_integer():
        raise Invalid(
            f"{name}={raw} is not a whole number; {what} is a whole number such as {example}"
        )
    return int(raw)


def gpu_count(name: str, raw: object) -> int:
    value = whole(name, raw, "a GPU count", NODE_GPUS)
    if value < 0:
        raise Invalid(f"{name}={value} is negative; GPU counts are 0 or more, in multiples of 8")
    return value


def days(name: str, raw: object) -> int:
    value = whole(name, raw, "a reservation length in days", 7)
    if not 1 <= value <= 90:
        raise Invalid(f"{name}={value} is out of range; Together reserves 1 to 90 days (1..90)")
    return value


def seconds(name: str, raw: object) -> float:
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        hint = " (drop the quotes)" if isinstance(raw, str) else ""
        raise Invalid(
            f"{name}={show(raw)} is a {type(raw).__name__}; expected seconds, e.g. 1800{hint}"
        )
    if raw <= 0:
        raise Invalid(f"{name}={raw} must be > 0; set a positive number of seconds, e.g. 1800")
    return float(raw)


def flag(name: str, raw: object) -> bool:
    if not isinstance(raw, bool):
        raise Invalid(f"{name}={show(raw)} is a {type(raw).__name__}; expected true or false")
    return raw


def choice(valid: tuple[str, ...]) -> Validator:
    """One of an enum's values (e.g. the wire schema's `GpuType`), with the closest suggested."""

    def parse(name: str, raw: object) -> str:
        if isinstance(raw, str) and raw in valid:
            return raw
        by_case = {v.casefold(): v for v in valid}
        close = difflib.get_close_matches(str(raw).casefold(), list(by_case), n=1)
        hint = f"did you mean {by_case[close[0]]!r}? " if close else ""
        raise Invalid(
            f"{name}={show(raw)} is not a valid value; {hint}use one of {', '.join(valid)}"
        )

    return parse


def timestamp(name: str, raw: object) -> str:
    """An ISO 8601 instant with its offset, e.g. `2027-01-31T00:00:00Z`, kept as canonical UTC
    text (`...Z`), so `+00:00` and `Z` spellings of one instant are no diff."""
    if not isinstance(raw, str):
        raise Invalid(
            f"{name}={show(raw)} is a {type(raw).__name__}; expected an ISO 8601 time such as "
            "'2027-01-31T00:00:00Z'"
        )
    try:
        when = datetime.fromisoformat(raw.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        when = None
    if when is None or when.tzinfo is None:
        raise Invalid(
            f"{name}={raw!r} is not an ISO 8601 time with an offset; write it like "
            "'2027-01-31T00:00:00Z'"
        )
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def instant(value: str) -> datetime:
    """The `datetime` of a `timestamp`-parsed value (canonical UTC text)."""
    return datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def record(
    keys: Mapping[str, Validator], required: tuple[str, ...] = (), what: str = "object"
) -> Validator:
    """A nested object of the API under its own keys (`{load_balancer: 'NONE', ...}`): each key
    parsed by its validator, unknown keys refused with the valid ones named, `required` ones
    present. The parsed object keeps only the keys that were set."""

    def parse(name: str, raw: object) -> dict[str, Any]:
        if not isinstance(raw, Mapping):
            raise Invalid(
                f"{name}={show(raw)} is a {type(raw).__name__}; expected an {what} with keys "
                f"{', '.join(keys)}"
            )
        unknown = [k for k in raw if k not in keys]
        if unknown:
            close = difflib.get_close_matches(str(unknown[0]), list(keys), n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise Invalid(
                f"{name} has an unknown key {unknown[0]!r}; {hint}valid keys: {', '.join(keys)}"
            )
        missing = [k for k in required if raw.get(k) is None]
        if missing:
            raise Invalid(
                f"{name} has no {missing[0]!r}; Together requires {', '.join(required)} in {name}"
            )
        return {k: keys[k](f"{name}.{k}", v) for k, v in raw.items() if v is not None}

    return parse


def records(item: Validator, key: str) -> Validator:
    """A list of nested objects, each parsed by `item`, told apart by `key` (unique). The API
    names each entry by `key`, so their order means nothing: the parsed list is in `key` order,
    and the same entries listed in another order are no diff."""

    def parse(name: str, raw: object) -> list[Any]:
        if not isinstance(raw, list | tuple):
            raise Invalid(f"{name}={show(raw)} is a {type(raw).__name__}; expected a list")
        parsed = [item(f"{name}[{i}]", entry) for i, entry in enumerate(raw)]
        seen: set[Any] = set()
        for entry in parsed:
            if entry.get(key) in seen:
                raise Invalid(
                    f"{name} has two entries with {key}={show(entry.get(key))}; each {key} "
                    "may appear once"
                )
            seen.add(entry.get(key))
        return sorted(parsed, key=lambda entry: str(entry.get(key)))

    return parse


def toggle() -> Validator:
    """`{enabled: true|false}`, the API's switch object."""
    return record({"enabled": flag}, what="object")
