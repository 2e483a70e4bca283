"""Kubernetes on a Together cluster (the `[kubernetes]` extra): `placement` pins pods to standard or
preemptible nodes and checks them against the drain window, `workloads` builds components on it,
and `autoscaler` deploys the preemptible autoscaler. Each name is re-exported here."""

from together_provider.kubernetes import placement
from together_provider.kubernetes.autoscaler import (
    AUTOSCALER_RULES,
    LEASE_RULES,
    PreemptibleAutoscaler,
    PreemptibleAutoscalerArgs,
)
from together_provider.kubernetes.placement import *  # noqa: F403 (placement.__all__: listed once)
from together_provider.kubernetes.workloads import (
    CheckpointingWorker,
    CheckpointingWorkerArgs,
    ServingReplicas,
    ServingReplicasArgs,
)

__all__ = [
    "AUTOSCALER_RULES",
    "LEASE_RULES",
    "CheckpointingWorker",
    "CheckpointingWorkerArgs",
    "PreemptibleAutoscaler",
    "PreemptibleAutoscalerArgs",
    "ServingReplicas",
    "ServingReplicasArgs",
]
__all__ += placement.__all__  # placement's public names, listed once (in placement.py)
