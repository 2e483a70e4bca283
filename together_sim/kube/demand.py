"""What a cluster's Kubernetes shows Together's autoscaler (:mod:`together_sim.autoscale`): the
GPUs each pending pod needs of a standard node, the free GPUs of each standard Node, and the
standard Nodes with no workload. Pure."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from together_facts.values import COMPUTE_CLASS_LABEL, GPUS_PER_NODE, PREEMPTIBLE
from together_sim.autoscale import Demand
from together_sim.plane.pods import terminal
from together_sim.targeting import is_marked

__all__ = ["demand_of"]

GPU: Final = "nvidia.com/gpu"
Obj = dict[str, Any]


def _unschedulable(pod: Obj) -> bool:
    if pod["spec"].get("nodeName") or pod.get("status", {}).get("phase") not in (None, "Pending"):
        return False
    return any(
        c.get("type") == "PodScheduled" and c.get("status") == "False"
        and c.get("reason") == "Unschedulable"
        for c in pod.get("status", {}).get("conditions") or []
    )  # fmt: skip


def _preemptible_only(pod: Obj) -> bool:
    """Pinned to preemptible nodes by nodeSelector or by every required affinity term."""
    spec = pod["spec"]
    if (spec.get("nodeSelector") or {}).get(COMPUTE_CLASS_LABEL) == PREEMPTIBLE:
        return True
    required = (
        ((spec.get("affinity") or {}).get("nodeAffinity") or {})
        .get("requiredDuringSchedulingIgnoredDuringExecution") or {}
    ).get("nodeSelectorTerms") or []  # fmt: skip
    return bool(required) and all(
        any(
            e.get("key") == COMPUTE_CLASS_LABEL and e.get("operator") == "In"
            and e.get("values") == [PREEMPTIBLE]
            for e in term.get("matchExpressions") or []
        )
        for term in required
    )  # fmt: skip


def _gpus(pod: Obj) -> int:
    total = 0
    for container in pod["spec"].get("containers") or []:
        resources = container.get("resources") or {}
        asked = [(resources.get(k) or {}).get(GPU) for k in ("requests", "limits")]
        total += max((int(a) for a in asked if a is not None), default=0)
    return total


def _workload(pod: Obj) -> bool:
    """Counts as work on its node: not finished, not a DaemonSet's, not a mirror pod."""
    meta = pod["metadata"]
    if terminal(pod) or "kubernetes.io/config.mirror" in (meta.get("annotations") or {}):
        return False
    return not any(o.get("kind") == "DaemonSet" for o in meta.get("ownerReferences") or [])


def _cordoned(node: Obj) -> bool:
    """Takes no new pod, whatever GPUs it has free."""
    return bool((node.get("spec") or {}).get("unschedulable"))


def demand_of(nodes: Iterable[Obj], pods: Iterable[Obj]) -> Demand:
    everything = list(pods)
    pending = sorted(
        (gpus for p in everything
         if _unschedulable(p) and not _preemptible_only(p) and (gpus := _gpus(p)) > 0),
        reverse=True,
    )  # fmt: skip
    standard = [n for n in nodes if COMPUTE_CLASS_LABEL not in (n["metadata"].get("labels") or {})]
    used: dict[str, int] = {}
    for pod in everything:
        if _workload(pod) and (node := pod["spec"].get("nodeName")):
            used[node] = used.get(node, 0) + _gpus(pod)
    names = {n["metadata"]["name"]: n for n in standard}
    return Demand(
        pending=tuple(pending),
        free={
            name: 0 if _cordoned(node) else max(GPUS_PER_NODE - used.get(name, 0), 0)
            for name, node in names.items()
        },
        idle=frozenset(name for name in names if name not in used),
        marked=frozenset(name for name, node in names.items() if is_marked(node)),
    )
