"""Translate between the resource's properties and Together's wire models. Pure: no I/O.

Why its own module: the provider hooks stay thin glue, and the one place that knows which
resource property is which API field can be unit tested without an engine or a server.
"""

from __future__ import annotations

from typing import Any, Final

from together_api.kubeconfig import decode_kube_config
from together_api.wire import (
    Cluster,
    ClusterCreateRequest,
    ClusterUpdateRequest,
)
from together_provider.spec import ClusterSpec, require_known, to_props

MAX_PREEMPTION_EVENTS: Final = 20
"""How many recent preemption events the `preemption_events` output keeps (newest last)."""

OUTPUT_FIELDS: Final[tuple[str, ...]] = (
    "cluster_id",
    "status",
    "desired_preemptible_gpus",
    "allocated_preemptible_gpus",
    "kube_config",
    "control_plane_ready",
    "created_at",
    "preemption_events",
)
"""Properties the provider computes; every input is echoed beside them."""

SECRET_OUTPUTS: Final[tuple[str, ...]] = ("kube_config",)

# Fields that identify what a cluster *is*; an adopted cluster must match them exactly.
IDENTITY_FIELDS: Final[tuple[str, ...]] = (
    "cluster_name",
    "region",
    "gpu_type",
    "cluster_type",
    "billing_type",
    "cuda_version",
    "nvidia_driver_version",
)


def create_request(spec: ClusterSpec) -> ClusterCreateRequest:
    """The POST body for a spec whose values are all known (create never sees unknowns)."""
    props = to_props(spec)
    body: dict[str, Any] = {
        key: require_known(key, props[key])
        for key in (
            "cluster_name",
            "region",
            "gpu_type",
            "num_gpus",
            "billing_type",
            "cluster_type",
            "cuda_version",
            "nvidia_driver_version",
        )
    }
    for key in ("project_id", "volume_id", "duration_days"):
        if key in props:
            body[key] = require_known(key, props[key])
    if props.get("num_preemptible_gpus"):
        body["num_preemptible_gpus"] = require_known(
            "num_preemptible_gpus", props["num_preemptible_gpus"]
        )
    return ClusterCreateRequest.model_validate(body)


def update_request(changes: dict[str, int]) -> ClusterUpdateRequest:
    """The PUT body: only the changed mutable fields, so every other field keeps its value."""
    return ClusterUpdateRequest.model_validate(changes)


def preemption_events(cluster: Cluster) -> list[dict[str, str]]:
    """Recent reclaim notices (both spellings Together uses), oldest first, capped."""
    events = [
        {
            "node_id": event.node_id,
            "reason": event.reason,
            "message": event.message,
            "timestamp": event.timestamp.isoformat(),
        }
        for event in cluster.node_lifecycle_events or []
        if event.is_preemption
    ]
    return events[-MAX_PREEMPTION_EVENTS:]


def outputs(inputs: dict[str, Any], cluster: Cluster) -> dict[str, Any]:
    """Every input echoed plus the computed properties: what create, update and read return.

    Echoing every input matters: diff and update receive the previous *outputs* as `olds`, and a
    missing key would look like a change (and an update that returns less wipes outputs).
    """
    return {
        **inputs,
        "cluster_id": cluster.cluster_id,
        "status": cluster.status,
        "desired_preemptible_gpus": cluster.desired_preemptible_gpus,
        "allocated_preemptible_gpus": cluster.allocated_preemptible_gpus,
        # Together sends base64 (its CLI decodes it); the output and pulumi-kubernetes get YAML.
        "kube_config": decode_kube_config(cluster.kube_config, cluster_id=cluster.cluster_id),
        "control_plane_ready": bool(cluster.control_plane_ready),
        "created_at": cluster.created_at.isoformat() if cluster.created_at else "",
        "preemption_events": preemption_events(cluster),
    }


def live_inputs(previous: dict[str, Any], cluster: Cluster) -> dict[str, Any]:
    """The inputs as Together sees them now, for refresh.

    The standard count and the preemptible *target* come from the API, so an out-of-band change
    shows as drift; `allocated` is output only, so a reclaim never does.
    """
    inputs = {
        k: v for k, v in previous.items() if k not in OUTPUT_FIELDS and not k.startswith("__")
    }
    inputs["num_gpus"] = cluster.num_gpus
    inputs["num_preemptible_gpus"] = cluster.desired_preemptible_gpus
    return inputs


def identity_mismatches(spec: ClusterSpec, cluster: Cluster) -> list[str]:
    """Immutable fields where an existing cluster differs from the spec, as `field: a != b`."""
    props = to_props(spec)
    found = {key: str(getattr(cluster, key) or "") for key in IDENTITY_FIELDS}
    if spec.project_id is not None:
        found["project_id"] = cluster.project_id
    return [
        f"{key}: cluster has {value!r}, spec has {props[key]!r}"
        for key, value in found.items()
        if key in props and str(props[key]) != value
    ]
