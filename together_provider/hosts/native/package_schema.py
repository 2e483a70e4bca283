"""The plugin's Pulumi package schema (`together`), generated from the field tables: it is what
lets programs in other languages use the plugin (Pulumi YAML type-checks against it; `pulumi
import` and SDK generators read it)."""

from __future__ import annotations

import functools
import json
import types
import typing
from importlib import metadata
from typing import Any, Final, Literal

from together_provider.extensions import NativeExtension
from together_provider.framework.fields import without_none
from together_provider.framework.kind import PACKAGE, Kind
from together_provider.hosts.native._properties import camel
from together_provider.registry import KINDS

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

NPM_PACKAGE: Final = "@together-gpu-clusters/together"
"""The npm name of the TypeScript SDK (sdk/typescript, generated from this schema by
tools/ts-codegen). It is in the schema because every TypeScript generator reads it there: the
SDK's package.json, and the `import` statements `pulumi import` writes into a TypeScript program.
Not under @pulumi/: the SDK installs from the repository, it is never published."""

GO_IMPORT_PATH: Final = "local.invalid/together-gpu-clusters/sdk/go/together"
"""The Go import path of the Go SDK (sdk/go/together, generated from this schema by
tools/go-codegen; its module is the path's parent, sdk/go). In the schema for the same reason as
NPM_PACKAGE: Go generators read it there. The `.invalid` host says it is fetched from nowhere: a
program reaches it with a `replace` directive to a clone's sdk/go (examples/go/go.mod)."""

_SCALARS: Final[dict[Any, str]] = {str: "string", int: "integer", float: "number", bool: "boolean"}


def version() -> str:
    try:
        return metadata.version("together-gpu-clusters")
    except metadata.PackageNotFoundError:
        return "0.0.0"


def python_type(annotation: Any) -> Any:
    """The plain type a value of `annotation` has on the wire: `None` dropped, a `Literal` of
    strings (or any other union) is `str`, containers kept."""
    plain = without_none(annotation)[0]
    if typing.get_origin(plain) in (Literal, typing.Union) or isinstance(plain, types.UnionType):
        return str
    return plain


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
    plain = without_none(annotation)[0]
    values = typing.get_args(plain) if typing.get_origin(plain) is Literal else ()
    return f" One of: {', '.join(map(str, values))}." if values else ""


def description(kind: Kind) -> str:
    """The resource's description: its table's docstring, then its `NativeExtension` notes."""
    native = kind.get(NativeExtension)
    text = (kind.schema.spec_type.__doc__ or "").strip()
    return f"{text} {native.notes if native else ''}"


def resource_schema(kind: Kind) -> dict[str, Any]:
    """One resource's entry in the package schema, from its field table and never a second list:
    property names are the camelCase form of the table's snake_case fields; types, descriptions,
    defaults, which are required and which are secret all come from the table."""
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
    # An output typed `X | None` is left out where it does not apply (`Schema.outputs_of`).
    set_outputs = [camel(f.name) for f in kind.schema.outputs if not without_none(f.annotation)[1]]
    return {
        "description": description(kind),
        "properties": {**inputs, **outputs},
        "required": [*always_set, *set_outputs],
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
        "resources": {kind.token: resource_schema(kind) for kind in KINDS},
        "language": {
            "nodejs": {"packageName": NPM_PACKAGE},
            "go": {"importBasePath": GO_IMPORT_PATH},
        },
    }


def package_schema_json() -> str:
    return json.dumps(package_schema(), indent=2)


__all__ = [
    "GO_IMPORT_PATH",
    "NPM_PACKAGE",
    "PACKAGE",
    "package_schema",
    "package_schema_json",
    "python_type",
    "resource_schema",
]
