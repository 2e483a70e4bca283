"""The plugin's Pulumi package schema (`together`), generated from the resource's fields.

The schema is what lets programs in other languages use the plugin: Pulumi YAML type-checks a
program against it, `pulumi import` and SDK generators read it. Property names are the camelCase
form of the lifecycle's snake_case fields; which are inputs, outputs, required or secret comes
from the core, never from a second list here.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import json
import types
import typing
from importlib import metadata
from typing import Any, Final, Literal

from together_provider import resource
from together_provider.mapping import OUTPUT_FIELDS, SECRET_OUTPUTS
from together_provider.native._wire import camel
from together_provider.spec import ClusterSpec, Unknown

PACKAGE: Final = "together"
CLUSTER_TOKEN: Final = f"{PACKAGE}:index:Cluster"

CONFIG: Final[dict[str, dict[str, Any]]] = {
    "apiKey": {
        "type": "string",
        "secret": True,
        "description": "Together API key; falls back to the TOGETHER_API_KEY environment variable.",
    },
    "baseUrl": {
        "type": "string",
        "description": "Together API base URL (default https://api.together.ai/v1); falls back to "
        "TOGETHER_BASE_URL.",
    },
}

_SCALARS: Final[dict[Any, str]] = {str: "string", int: "integer", float: "number", bool: "boolean"}


def version() -> str:
    try:
        return metadata.version("together-gpu-clusters")
    except metadata.PackageNotFoundError:
        return "0.0.0"


def _type_spec(annotation: Any) -> dict[str, Any]:
    """A Pulumi schema type for a Python annotation (unknown markers and None dropped)."""
    origin = typing.get_origin(annotation)
    if isinstance(annotation, types.UnionType) or origin is typing.Union:
        kept = [a for a in typing.get_args(annotation) if a not in (Unknown, type(None))]
        return _type_spec(kept[0]) if len(kept) == 1 else {"type": "string"}
    if origin is Literal:
        return {"type": "string"}
    if origin is list:
        return {"type": "array", "items": _type_spec(typing.get_args(annotation)[0])}
    if origin is dict:
        return {
            "type": "object",
            "additionalProperties": _type_spec(typing.get_args(annotation)[1]),
        }
    if annotation in _SCALARS:
        return {"type": _SCALARS[annotation]}
    raise TypeError(f"no schema type for {annotation!r}")


def _output_type(annotation: Any) -> Any:
    """`pulumi.Output[T]` -> T."""
    args = typing.get_args(annotation)
    return args[0] if args else annotation


@functools.cache
def package_schema() -> dict[str, Any]:
    """The whole package schema as a dict (see `package_schema_json`)."""
    hints = typing.get_type_hints(ClusterSpec)
    outputs = inspect.get_annotations(resource.Cluster, eval_str=True)
    fields = ClusterSpec.__dataclass_fields__
    inputs = {camel(name): _type_spec(hints[name]) for name in fields}
    required_inputs = [
        camel(name)
        for name, f in fields.items()
        if f.default is dataclasses.MISSING and name != "cluster_name"  # names the resource
    ]
    properties = {
        **inputs,
        **{camel(name): _type_spec(_output_type(outputs[name])) for name in OUTPUT_FIELDS},
    }
    for name in SECRET_OUTPUTS:
        properties[camel(name)]["secret"] = True
    return {
        "name": PACKAGE,
        "displayName": "Together AI GPU clusters",
        "version": version(),
        "description": "Together AI GPU clusters: standard GPUs plus a preemptible target.",
        "config": {"variables": CONFIG},
        "provider": {"inputProperties": CONFIG},
        "resources": {
            CLUSTER_TOKEN: {
                "description": resource.Cluster.__doc__ or "",
                "properties": properties,
                "required": sorted(set(required_inputs) | {camel(n) for n in OUTPUT_FIELDS}),
                "inputProperties": inputs,
                "requiredInputs": required_inputs,
            }
        },
    }


def package_schema_json() -> str:
    return json.dumps(package_schema(), indent=2)
