"""How the simulated API reads a request body, the same for every endpoint: known fields typed,
an explicit ``null`` "not given", unknown fields ignored and named (docs/simulator.md, "Request
bodies", says why)."""

from __future__ import annotations

import types
from typing import Any, Final, TypeVar, Union, get_args, get_origin

from pydantic import BaseModel

from together_api.wire import ClusterCreateRequest

__all__ = ["IGNORED_HEADER", "SimCreateRequest", "parse"]

IGNORED_HEADER: Final = "X-Together-Sim-Ignored-Fields"

M = TypeVar("M", bound=BaseModel)


class SimCreateRequest(ClusterCreateRequest):
    """Create fields beyond the Python SDK's: the OpenAPI spec's ``auto_scaled`` (deprecated,
    default false; the Go SDK and Terraform send ``false`` on every create) and
    ``gpu_node_failover_enabled``. Stored, never echoed (the SDK's ``Cluster`` has neither)."""

    auto_scaled: bool | None = None
    gpu_node_failover_enabled: bool | None = None


def _model_of(annotation: Any) -> type[BaseModel] | None:
    """The pydantic model inside ``X``, ``X | None`` or ``list[X]``, if there is one."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if get_origin(annotation) in (Union, types.UnionType, list):
        for arg in get_args(annotation):
            found = _model_of(arg)
            if found is not None:
                return found
    return None


def known_fields(model: type[BaseModel], body: Any, path: str = "") -> tuple[Any, list[str]]:
    """``body`` without nulls and without fields ``model`` does not define, plus what was cut."""
    if not isinstance(body, dict):
        return body, []
    kept: dict[str, Any] = {}
    ignored: list[str] = []
    for key, value in body.items():
        where = f"{path}{key}"
        field = model.model_fields.get(key)
        if field is None:
            ignored.append(where)
            continue
        if value is None:
            continue
        nested = _model_of(field.annotation)
        if nested is not None and isinstance(value, list):
            items = [known_fields(nested, item, f"{where}[{i}].") for i, item in enumerate(value)]
            kept[key] = [item for item, _ in items]
            ignored += [name for _, cut in items for name in cut]
        elif nested is not None:
            kept[key], cut = known_fields(nested, value, f"{where}.")
            ignored += cut
        else:
            kept[key] = value
    return kept, ignored


def parse(model: type[M], body: dict[str, Any]) -> tuple[M, list[str]]:
    """Validate the known part of ``body`` (pydantic errors become 400s in the app); the rest is
    returned to be named in ``X-Together-Sim-Ignored-Fields``, not refused: Together's backend
    looks like a gRPC gateway (operation ids such as ``GPUClusterService_Create``), whose stock
    JSON unmarshaler discards unknown fields, and Terraform PUTs create-only attributes too."""
    known, ignored = known_fields(model, body)
    return model.model_validate(known), ignored
