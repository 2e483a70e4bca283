"""The plugin's Pulumi package schema (`together`), generated from the field table.

The schema is what lets programs in other languages use the plugin: Pulumi YAML type-checks a
program against it, `pulumi import` and SDK generators read it. Property names are the camelCase
form of the tables' snake_case fields; types, descriptions, defaults, which are required and
which are secret all come from each resource's field table (`kinds.KINDS`: `cluster_schema.CLUSTER`
and `volume_schema.VOLUME`), never from a second list here.
"""

from __future__ import annotations

import functools
import json
import types
import typing
from importlib import metadata
from typing import Any, Final, Literal

from together_provider.native._wire import camel
from together_provider.native.kinds import CLUSTER_TOKEN, KINDS, PACKAGE, VOLUME_TOKEN, Kind

CONFIG: Final[dict[str, dict[str, Any]]] = {
    "apiKey": {
        "type": "string",
        "secret": True,
        "description": "Together API key; falls back to the TOGETHER_API_KEY environment variable.",
    },
    "baseUrl": {
        "type": "string",
        "description": "Together API base URL, the host only (default https://api.together.ai; a "
        "URL ending in /v1 means the same); falls back to TOGETHER_BASE_URL.",
    },
}

_SCALARS: Final[dict[Any, str]] = {str: "string", int: "integer", float: "number", bool: "boolean"}


def version() -> str:
    try:
        return metadata.version("together-gpu-clusters")
    except metadata.PackageNotFoundError:
        return "0.0.0"


def python_type(annotation: Any) -> Any:
    """The plain type a value of `annotation` has on the wire: `None` dropped, a `Literal` of
    strings is `str`, containers kept."""
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        kept = [a for a in typing.get_args(annotation) if a is not type(None)]
        return python_type(kept[0]) if len(kept) == 1 else str
    if typing.get_origin(annotation) is Literal:
        return str
    return annotation


def type_spec(annotation: Any) -> dict[str, Any]:
    """A Pulumi schema type for a field's annotation."""
    plain = python_type(annotation)
    origin, args = typing.get_origin(plain), typing.get_args(plain)
    if origin is list:
        return {"type": "array", "items": type_spec(args[0])}
    if origin is dict:
        return {"type": "object", "additionalProperties": type_spec(args[1])}
    if plain is Any:
        return {"$ref": "pulumi.json#/Any"}
    if plain in _SCALARS:
        return {"type": _SCALARS[plain]}
    raise TypeError(f"no schema type for {annotation!r}")


def _choices(annotation: Any) -> str:
    """` One of: A, B.` for a Literal field (the schema keeps it a plain string)."""
    if typing.get_origin(annotation) is not Literal:
        kept = [a for a in typing.get_args(annotation) if typing.get_origin(a) is Literal]
        annotation = kept[0] if kept else None
    values = typing.get_args(annotation) if annotation is not None else ()
    return f" One of: {', '.join(map(str, values))}." if values else ""


def resource_schema(kind: Kind) -> dict[str, Any]:
    """One resource's entry in the package schema, from its field table."""
    inputs: dict[str, dict[str, Any]] = {}
    for f in kind.schema.inputs:
        spec = {**type_spec(f.annotation), "description": f.doc + _choices(f.annotation)}
        if f.default is not None:
            spec["default"] = f.default
        inputs[camel(f.name)] = spec
    outputs = {
        camel(f.name): {
            **type_spec(f.annotation),
            "description": f.doc,
            **({"secret": True} if f.secret else {}),
        }
        for f in kind.schema.outputs
    }
    inputs_ = kind.schema.inputs
    required_inputs = [camel(f.name) for f in inputs_ if f.required and not f.names_resource]
    always_set = [camel(f.name) for f in inputs_ if f.required or f.default is not None]
    return {
        "description": kind.description,
        "properties": {**inputs, **outputs},
        "required": [*always_set, *outputs],
        "inputProperties": inputs,
        "requiredInputs": required_inputs,
    }


@functools.cache
def package_schema() -> dict[str, Any]:
    """The whole package schema as a dict (see `package_schema_json`)."""
    return {
        "name": PACKAGE,
        "displayName": "Together AI GPU clusters",
        "version": version(),
        "description": "Together AI GPU clusters (standard GPUs plus a preemptible target) and "
        "the shared volumes that keep their checkpoints.",
        "config": {"variables": CONFIG},
        "provider": {"inputProperties": CONFIG},
        "resources": {token: resource_schema(kind) for token, kind in KINDS.items()},
    }


def package_schema_json() -> str:
    return json.dumps(package_schema(), indent=2)


__all__ = [
    "CLUSTER_TOKEN",
    "PACKAGE",
    "VOLUME_TOKEN",
    "package_schema",
    "package_schema_json",
    "python_type",
    "resource_schema",
]
