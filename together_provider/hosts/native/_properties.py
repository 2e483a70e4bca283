"""Between the plugin protocol's values and the plain dicts the core parses, so the field tables
never see camelCase names, secret wrappers or unknown sentinels. Pure: no I/O."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from pulumi.provider.experimental.property_value import Computed, PropertyValue

from together_provider.framework.fields import to_camel
from together_provider.framework.schema import UNKNOWN
from together_provider.registry import KINDS

PROPERTIES: tuple[str, ...] = tuple(
    dict.fromkeys(name for k in KINDS for name in (*k.schema.input_names, *k.schema.output_names))
)
"""Every property of the plugin's resources, snake_case (the field tables' names)."""

_SNAKE: dict[str, str] = {to_camel(name): name for name in PROPERTIES}


def camel(name: str) -> str:
    """The schema name of a lifecycle property (`num_gpus` -> `numGpus`); host bookkeeping
    (`__unread`) keeps its name."""
    return name if name.startswith("__") else to_camel(name)


def snake(name: str) -> str:
    """The lifecycle name of a schema property; an unknown name is kept, so `check` can name it."""
    return _SNAKE.get(name, name)


def _plain(value: PropertyValue) -> Any:
    inner = value.value
    if isinstance(inner, Computed):
        return UNKNOWN
    if isinstance(inner, Mapping):
        return {key: _plain(item) for key, item in inner.items()}
    if isinstance(inner, tuple):
        return [_plain(item) for item in inner]
    return inner


def to_props(values: Mapping[str, PropertyValue]) -> dict[str, Any]:
    """Protocol properties -> the core's plain dicts (secrets unwrapped: the core never logs them).

    The protocol carries camelCase names (`numGpus`, as every Pulumi schema does), numbers as
    doubles, secrets as wrapped values and values unknown until apply as a sentinel string; the
    field tables want snake_case names and plain values (whole floats are fine: parsing normalises
    them, once per hook) and the lifecycle returns ints, which go back as doubles (`to_values`):
    that is all the wire has."""
    return {snake(key): _plain(value) for key, value in values.items()}


def _value(value: Any, secret: bool = False) -> PropertyValue:
    if isinstance(value, bool) or value is None or isinstance(value, str | float):
        return PropertyValue(value, is_secret=secret)
    if isinstance(value, int):
        return PropertyValue(float(value), is_secret=secret)
    if isinstance(value, Mapping):
        return PropertyValue({str(k): _value(v) for k, v in value.items()}, is_secret=secret)
    if isinstance(value, list | tuple):
        return PropertyValue([_value(v) for v in value], is_secret=secret)
    raise TypeError(f"cannot send a {type(value).__name__} to the engine: {value!r}")


def to_values(props: Mapping[str, Any], secret: Collection[str] = ()) -> dict[str, PropertyValue]:
    """Lifecycle properties -> protocol properties; the `secret` ones are sent as secrets."""
    return {camel(key): _value(value, key in secret) for key, value in props.items()}
