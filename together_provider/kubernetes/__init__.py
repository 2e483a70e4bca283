"""Kubernetes on a Together cluster (the `[kubernetes]` extra): `placement` pins pods to standard or
preemptible nodes and checks them against the drain window, `workloads` builds components on it,
and `autoscaler` deploys the preemptible autoscaler. Each name is re-exported here."""

from together_provider.kubernetes.autoscaler import (
    AUTOSCALER_RULES,
    LEASE_RULES,
    PreemptibleAutoscaler,
    PreemptibleAutoscalerArgs,
)
from together_provider.kubernetes.placement import (
    COMPUTE_CLASS_LABEL,
    DRAIN_WINDOW_SECONDS,
    GRACE_FIELD,
    ComputeClass,
    WorkloadCluster,
    WorkloadSpecError,
    check_pod_spec,
    cluster_provider,
    forbids_preemptible,
    off_preemptible,
    on_preemptible,
    pod_template,
    requires_preemptible,
    warn_if_no_preemptible_target,
)
from together_provider.kubernetes.workloads import (
    CheckpointingWorker,
    CheckpointingWorkerArgs,
    ServingReplicas,
    ServingReplicasArgs,
)

__all__ = [
    "AUTOSCALER_RULES",
    "COMPUTE_CLASS_LABEL",
    "DRAIN_WINDOW_SECONDS",
    "GRACE_FIELD",
    "LEASE_RULES",
    "CheckpointingWorker",
    "CheckpointingWorkerArgs",
    "ComputeClass",
    "PreemptibleAutoscaler",
    "PreemptibleAutoscalerArgs",
    "ServingReplicas",
    "ServingReplicasArgs",
    "WorkloadCluster",
    "WorkloadSpecError",
    "check_pod_spec",
    "cluster_provider",
    "forbids_preemptible",
    "off_preemptible",
    "on_preemptible",
    "pod_template",
    "requires_preemptible",
    "warn_if_no_preemptible_target",
]
