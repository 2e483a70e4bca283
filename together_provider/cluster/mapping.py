"""Binds the field table's views (`cluster.table`, which says which property is which API field)
to Together's wire models, so the translation is unit tested without an engine. Pure: no I/O."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from together_api.wire import Cluster, ClusterCreateRequest, ClusterUpdateRequest
from together_provider.cluster.table import CLUSTER, ClusterSpec


def create_request(spec: ClusterSpec) -> ClusterCreateRequest:
    """The POST body of a resolved spec."""
    return ClusterCreateRequest.model_validate(CLUSTER.request_body(spec))


def update_request(changes: Mapping[str, Any]) -> ClusterUpdateRequest:
    """The PUT body: only the changed mutable fields, so every other field keeps its value."""
    return ClusterUpdateRequest.model_validate(dict(changes))


def outputs(inputs: Mapping[str, Any], cluster: Cluster) -> dict[str, Any]:
    """Every input echoed plus the computed properties: what create, update and read return.

    Echoing every input matters: diff and update receive the previous *outputs* as `olds`, and a
    missing key would look like a change (and an update that returns less wipes outputs). A
    floor whose ceiling is set echoes the live value: the next diff clamps from there.
    """
    return {**CLUSTER.with_live_ranges(inputs, cluster), **CLUSTER.outputs_of(cluster)}
