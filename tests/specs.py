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
