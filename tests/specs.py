"""Cluster and volume specs shared by the tests, so one valid baseline is written once."""

from __future__ import annotations

from typing import Any, Final

CLUSTER_SPEC: Final[dict[str, Any]] = {
    "region": "us-central-8",
    "gpu_type": "H100_SXM",
    "num_gpus": 8,
    "cuda_version": "12.8",
    "nvidia_driver_version": "570",
    "project_id": "proj-test",
}
"""A valid Cluster spec (one 8-GPU standard node, no preemptible target) the simulator accepts."""

RESERVED_CREATE: Final[dict[str, Any]] = {
    "region": "us-central-2",
    "gpu_type": "RTX_6000_PCI",
    "num_gpus": 8,
    "billing_type": "RESERVED",
    "duration_days": 3,
    "cuda_version": "12.8",
    "nvidia_driver_version": "570",
}
"""A create request's body for a 3-day reservation that names its driver by CUDA and driver
version (the SDK's legacy variant), not by `nvidia_version_id`."""

ON_DEMAND_CREATE: Final[dict[str, Any]] = {
    "region": "us-central-8",
    "gpu_type": "H100_SXM",
    "num_gpus": 8,
    "billing_type": "ON_DEMAND",
}
"""A create request's body for one on-demand 8-GPU H100 node, its driver still to name (by
`nvidia_version_id`, or by CUDA and driver version as `LEGACY_DRIVER`)."""

LEGACY_DRIVER: Final[dict[str, Any]] = {"cuda_version": "12.8", "nvidia_driver_version": "570"}
"""A driver named by CUDA and driver version (the SDK's legacy variant)."""

OIDC: Final[dict[str, str]] = {
    "client_id": "k8s",
    "issuer_url": "https://idp.invalid",
    "username_claim": "email",
    "username_prefix": "oidc:",
    "group_claim": "groups",
    "group_prefix": "oidc:",
}
"""A cluster's `oidc_config` with every field set, as Together's clients send it."""

CKPT: Final[dict[str, Any]] = {"region": "us-central-8", "size_tib": 2, "project_id": "proj-test"}
"""A valid SharedVolume spec, declared as `ckpt` in the cluster's region."""

TRAIN: Final[dict[str, Any]] = {**CLUSTER_SPEC, "volume": "ckpt"}
"""`CLUSTER_SPEC` attaching the volume the stack declares as `ckpt` (by reference)."""

ENGINE_PROPS: Final[dict[str, Any]] = {
    "cluster_name": "train",
    "region": "us-central-8",
    "gpu_type": "H100_SXM",
    "num_gpus": 8.0,
    "cuda_version": "12.6",
    "nvidia_driver_version": "560",
}
"""Raw provider properties as the engine hands them over: every number a float."""
