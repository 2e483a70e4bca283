"""What a pod needs and where it may run, and what a node holds, read from Kubernetes objects; where
a pod may run is the one rule the provider applies too (`together_facts.placement`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from lightkube.models.core_v1 import Container, PodSpec
from lightkube.resources.core_v1 import Node, Pod

from together_autoscaler.model import NodeState, PendingPod
from together_facts.placement import may_use_preemptible, needs_preemptible
from together_facts.values import (
    COMPUTE_CLASS_LABEL,
    GPUS_PER_NODE,
    PREEMPTIBLE,
    TARGETED_SCALE_DOWN_ANNOTATION,
)

__all__ = [
    "COMPUTE_CLASS_LABEL",
    "GPU_RESOURCE",
    "PREEMPTIBLE",
    "node_state",
    "pending_pod",
    "pod_gpus",
    "running_workloads",
]

GPU_RESOURCE: Final = "nvidia.com/gpu"
MIRROR_ANNOTATION: Final = "kubernetes.io/config.mirror"


def pending_pod(pod: Pod) -> PendingPod | None:
    """The pod as scale-up demand, when the scheduler marked it Unschedulable; else None.

    Together labels preemptible nodes ``together.ai/compute-class=preemptible``. A pod *needs*
    preemptible capacity when a ``nodeSelector`` or every required node-affinity term asks for
    that label, or when it tolerates a taint on it (a cluster that taints its preemptible nodes);
    it *may use* it unless its selector or affinity keeps it off."""
    if not _unschedulable(pod) or pod.metadata is None or pod.spec is None:
        return None
    spec = pod.spec.to_dict()
    return PendingPod(
        namespace=pod.metadata.namespace or "default",
        name=pod.metadata.name or "",
        uid=pod.metadata.uid or "",
        gpus=pod_gpus(pod.spec),
        needs_preemptible=needs_preemptible(spec),
        may_use_preemptible=may_use_preemptible(spec),
    )


def node_state(node: Node, pods: Iterable[Pod], reclaimed: bool) -> NodeState:
    """A preemptible Node with the workload pods bound to it (``pods``: those on this node)."""
    meta, spec, status = node.metadata, node.spec, node.status
    annotations = (meta.annotations if meta else None) or {}
    cordoned = bool(spec and spec.unschedulable)
    allocatable = (status.allocatable if status else None) or {}
    conditions = (status.conditions if status else None) or []
    workload = running_workloads(pods)
    return NodeState(
        name=(meta.name if meta else None) or "",
        gpus=_quantity(allocatable.get(GPU_RESOURCE), GPUS_PER_NODE),
        ready=any(c.type == "Ready" and c.status == "True" for c in conditions),
        cordoned=cordoned,
        marked=cordoned and str(annotations.get(TARGETED_SCALE_DOWN_ANNOTATION)).lower() == "true",
        reclaimed=reclaimed,
        used_gpus=sum(pod_gpus(p.spec) for p in workload if p.spec is not None),
        workload_pods=len(workload),
    )


def running_workloads(pods: Iterable[Pod]) -> list[Pod]:
    """The pods that keep a node busy: not ended, DaemonSet and mirror pods aside."""
    return [p for p in pods if _workload(p) and not _ended(p)]


def pod_gpus(spec: PodSpec) -> int:
    """``nvidia.com/gpu`` the pod requests: the containers' sum, or an init container's if more
    (an extended resource's request defaults to its limit)."""
    running = sum(_container_gpus(c) for c in spec.containers or [])
    init = max((_container_gpus(c) for c in spec.initContainers or []), default=0)
    return max(running, init)


def _container_gpus(container: Container) -> int:
    resources = container.resources
    if resources is None:
        return 0
    value = (resources.requests or {}).get(GPU_RESOURCE)
    if value is None:
        value = (resources.limits or {}).get(GPU_RESOURCE)
    return _quantity(value, 0)


def _quantity(value: object, default: int) -> int:
    try:
        return int(str(value)) if value is not None else default
    except ValueError:
        return default


def _unschedulable(pod: Pod) -> bool:
    status = pod.status
    if status is None or status.phase != "Pending" or (pod.spec and pod.spec.nodeName):
        return False
    return any(
        c.type == "PodScheduled" and c.status == "False" and c.reason == "Unschedulable"
        for c in status.conditions or []
    )


def _workload(pod: Pod) -> bool:
    meta = pod.metadata
    if meta is None:
        return True
    if MIRROR_ANNOTATION in (meta.annotations or {}):
        return False
    return not any(ref.kind == "DaemonSet" for ref in meta.ownerReferences or [])


def _ended(pod: Pod) -> bool:
    return pod.status is not None and pod.status.phase in ("Succeeded", "Failed")
