"""The value sets and constants of Together's GPU clusters API, part of the wire schema but apart
from the pydantic models in `wire` (which re-exports them), so a preview's `check` and `diff`
never load pydantic."""

from __future__ import annotations

from typing import Final, Literal, get_args

__all__ = [
    "BILLING_TYPES",
    "CLUSTER_TYPES",
    "COMPUTE_CLASS_LABEL",
    "DEFAULT_BASE_URL",
    "DRAIN_WINDOW_SECONDS",
    "GPUS_PER_NODE",
    "GPU_TYPES",
    "LIFECYCLE_REASONS",
    "PREEMPTIBLE",
    "PREEMPTION_REASONS",
    "TARGETED_SCALE_DOWN_ANNOTATION",
    "BillingType",
    "ClusterType",
    "GpuType",
    "LoadBalancer",
]

DEFAULT_BASE_URL: Final = "https://api.together.ai/v1"
"""Production base URL; already ends in ``/v1``, paths are ``/compute/...``."""

GPUS_PER_NODE: Final = 8
"""Every Together GPU node, standard or preemptible, has 8 GPUs."""

DRAIN_WINDOW_SECONDS: Final = 300
"""A reclaimed preemptible node is removed at most this long after the notice."""

PREEMPTION_REASONS: Final = ("TogetherPreemptionNotified", "TogetherPreempted")
"""Lifecycle-event reasons that mean a reclaim; the docs and the SDK disagree, accept both."""

COMPUTE_CLASS_LABEL: Final = "together.ai/compute-class"
"""The Node label Together sets to :data:`PREEMPTIBLE` on preemptible nodes; standard nodes may
carry no such label at all, so "standard" is "not preemptible" (``NotIn``), never ``In``."""

PREEMPTIBLE: Final = "preemptible"
"""The :data:`COMPUTE_CLASS_LABEL` value of a preemptible node."""

TARGETED_SCALE_DOWN_ANNOTATION: Final = "node.together.ai/delete-node-on-scale-down"
"""Targeted scale-down (Together's Instant Clusters docs, "Cluster Scaling"): a Kubernetes Node
that is cordoned and carries this annotation with the value ``"true"`` is removed first when the
count is lowered. Cordon and annotate, then lower the count."""

LIFECYCLE_REASONS: Final = (
    *PREEMPTION_REASONS,
    "TogetherNodeAdded",
    "TogetherScaledUp",
    "TogetherScaledDown",
)
"""Every documented ``node_lifecycle_events[].reason``: the preemptible docs name
``TogetherPreemptionNotified``, ``TogetherNodeAdded`` and ``TogetherScaledDown``; the SDK's
docstrings ``TogetherScaledUp``, ``TogetherScaledDown`` and ``TogetherPreempted``. The field stays
a plain ``str``: a reason not listed here is kept, never an error."""

GpuType = Literal[
    "H100_SXM",
    "H200_SXM",
    "RTX_6000_PCI",
    "L40_PCIE",
    "B200_SXM",
    "H100_SXM_INF",
    "B300_SXM",
    "GB200_SXM",
]
BillingType = Literal["RESERVED", "ON_DEMAND", "SCHEDULED_CAPACITY"]
ClusterType = Literal["KUBERNETES", "SLURM"]
LoadBalancer = Literal["NONE", "TRAEFIK", "NGINX", "ISTIO"]

GPU_TYPES: Final[tuple[str, ...]] = get_args(GpuType)
BILLING_TYPES: Final[tuple[str, ...]] = get_args(BillingType)
CLUSTER_TYPES: Final[tuple[str, ...]] = get_args(ClusterType)
