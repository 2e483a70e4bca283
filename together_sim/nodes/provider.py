"""One cluster's node provider: the one object that makes, finds and deletes the cluster's nodes,
KWOK and real alike, as kind's provider owns a cluster's nodes. The mirror asks it for nodes and
keeps no note of which kind each one is."""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, Final

from together_facts.values import COMPUTE_CLASS_LABEL, GPUS_PER_NODE, PREEMPTIBLE
from together_sim.nodes import NODE_LABEL, SimNode
from together_sim.nodes.kwok import KwokNode, kwok_node_object, remove_node_object
from together_sim.nodes.pool import RealNodePool
from together_sim.nodes.real import JoinedPlane, RealNode, RealNodeSpec, node_labels
from together_sim.plane.client import KubeApi
from together_sim.plane.pods import PodClock, gone
from together_sim.plane.views import NodeView

__all__ = ["CRASHED", "NodeProvider", "is_real"]

CRASHED: Final = "TogetherSimNodeProcessExited"
"""The reason of the Warning Event on a real node whose kubelet or containerd exited."""

log = logging.getLogger(__name__)
Obj = dict[str, Any]


def is_real(node: Obj) -> bool:
    """Whether a Node object is a real node's: its kubelet registered it with the KWOK label
    set to false (:func:`~together_sim.nodes.real.node_labels`)."""
    return (node["metadata"].get("labels") or {}).get(NODE_LABEL) == "false"


class NodeProvider:
    """The nodes of cluster ``cluster_id``, whose control plane its real nodes join (``plane``):
    a new node is real while the pool (``--real-nodes``) has a free slot, else a KWOK node, and
    a real node that could not start is a KWOK node from then on. :meth:`delete` undoes what
    :meth:`make` made: a KWOK node's Node object, a real node's processes and host changes (its
    slot back to the pool).

    The calls that take ``api`` run on the mirror's thread (the connection is the thread's);
    :attr:`registering`, :meth:`status` and :meth:`release` are safe from any thread."""

    def __init__(
        self, cluster_id: str, plane: JoinedPlane, pool: RealNodePool | None = None
    ) -> None:
        self.cluster_id = cluster_id
        self.plane = plane
        self.pool = pool
        self._real: dict[str, RealNode] = {}
        self._drained_at: dict[str, float] = {}
        """Real, monotonic seconds at which each real node was first seen draining."""
        self._kwok_only: set[str] = set()
        """Nodes whose real node could not start: KWOK nodes from then on."""
        self._crashes: list[tuple[str, str]] = []
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ what the mirror asks

    @property
    def registering(self) -> bool:
        """Whether a node is still starting: made, not yet registered, not failed."""
        return any(not n.ready(None) and not n.failure for n in self._real_nodes())

    def has(self, name: str) -> bool:
        """Whether this provider holds a node of that name that the API server may not list
        yet (a real node whose kubelet has not registered it)."""
        return name in self._real

    def with_kubelet(self) -> frozenset[str]:
        """The nodes whose pods a kubelet of their own runs and ends (the pod clock leaves those
        pods to it)."""
        return frozenset(self._real)

    def make(
        self, api: KubeApi, pods: PodClock, gpu_type: str, node: NodeView, wanted: set[str]
    ) -> SimNode | None:
        """Make ``node``: real when a slot is free, else a KWOK node. None: nothing made now, as
        a real node of this cluster is still leaving and its slot is this node's."""
        real = self._make_real(gpu_type, node)
        if real is not None:
            return real
        leaving = any(n not in wanted for n in self._real)
        if (
            leaving
            and self.pool is not None
            and self.pool.reuses  # the slot the leaving node frees will be given again
            and node.node_id not in self._kwok_only
        ):
            return None
        return KwokNode(api, kwok_node_object(gpu_type, node), pods).make()

    def draining(self, name: str) -> None:
        """The node's drain was seen now: its pods' grace periods count from here (real
        seconds, for a real node's :meth:`~SimNode.may_go`)."""
        if name in self._real:
            self._drained_at.setdefault(name, time.monotonic())

    def prune(self, api: KubeApi, pods: PodClock, live: dict[str, Obj], wanted: set[str]) -> None:
        """Before nodes are made: a real Node no node of this run backs is deleted (a stopped
        simulator's), and each real node the world removed goes once it may, which frees its
        slot for a node made in the same pass. ``live`` loses what went."""
        self._forget_stale(api, pods, live)
        leaving = [n for n in self._real if n not in wanted]
        if not leaving:
            return
        all_pods = api.pods()
        for name in leaving:
            node: SimNode = self._real[name]
            if not node.may_go(all_pods, self._drained_at.get(name), time.monotonic()):
                continue  # its pods' grace periods, in real seconds, are not over
            self._release(name)  # first: its kubelet would register the Node again
            if live.pop(name, None) is not None:
                remove_node_object(api, pods, name)  # what is left of its pods, and its Node

    def adopt(self, api: KubeApi, live: dict[str, Obj]) -> None:
        """Real Nodes as their kubelets registered them: each advertises 8 GPUs (a status
        patch, as Kubernetes documents for extended resources; the kubelet keeps it), a crash
        is a Warning Event on its Node, and a node that could not start is released, to be made
        a KWOK node on the next pass."""
        with self._lock:
            crashes, self._crashes = self._crashes, []
        for name, real in list(self._real.items()):
            k8s = live.get(name)
            if real.ready(k8s) and k8s is not None:
                allocatable = k8s.get("status", {}).get("allocatable", {})
                if allocatable.get("nvidia.com/gpu") != str(GPUS_PER_NODE):
                    gpus = {"nvidia.com/gpu": str(GPUS_PER_NODE)}
                    live[name] = api.patch_node(
                        name, {"status": {"capacity": gpus, "allocatable": gpus}}, status=True
                    )
            elif real.failure and k8s is None:
                log.warning("real node %s could not start (%s); it is a KWOK node instead",
                            name, real.failure)  # fmt: skip
                self._kwok_only.add(name)
                self._release(name)
        for name, what in crashes:
            k8s = live.get(name)
            if k8s is not None and self._real.get(name) is not None:
                api.node_event(k8s, reason=CRASHED, message=(
                    f"{what}: the simulator leaves the node as Kubernetes shows it (NotReady) "
                    "until Together removes it (a reclaim, a scale-down or the cluster's delete)"
                ))  # fmt: skip

    def delete(self, api: KubeApi, pods: PodClock, k8s: Obj) -> list[str]:
        """Undo what :meth:`make` made for the node behind ``k8s``; returns what it left."""
        name = k8s["metadata"]["name"]
        if name in self._real:
            return self._release(name)
        return KwokNode(api, k8s, pods).delete()

    def release(self) -> None:
        """Remove every real node of the cluster from the host (the cluster or the simulator is
        going); safe from any thread, and more than once."""
        if self.pool is not None:
            for node in self._real_nodes():
                self.pool.release(node)

    def status(self) -> dict[str, dict[str, Any]]:
        """Each real node's slot, state, start time, pids and address, by name."""
        return {name: node.status() for name, node in list(self._real.items())}

    # ------------------------------------------------------------------ real nodes

    def _real_nodes(self) -> list[RealNode]:
        return list(self._real.values())

    def _make_real(self, gpu_type: str, node: NodeView) -> RealNode | None:
        """A real node for ``node`` when a slot is free (None: it is to be a KWOK node)."""
        if self.pool is None or node.node_id in self._kwok_only:
            return None
        compute_class = (COMPUTE_CLASS_LABEL, PREEMPTIBLE) if node.preemptible else None

        def labels(spec: RealNodeSpec) -> str:
            return node_labels(spec, compute_class)

        real = self.pool.acquire(
            name=node.node_id,
            preemptible=node.preemptible,
            gpu_type=gpu_type,
            plane=self.plane,
            labels=labels,
            on_crash=self._on_crash,
        )
        if real is not None:
            self._real[node.node_id] = real
            log.info("cluster %s: node %s is a real node", self.cluster_id, node.node_id)
        return real

    def _on_crash(self, node: RealNode, process: str, code: int) -> None:
        """From the node's thread: noted here, reported by the next :meth:`adopt`."""
        with self._lock:
            self._crashes.append((node.name, f"{process} exited with {code}"))

    def _forget_stale(self, api: KubeApi, pods: PodClock, live: dict[str, Obj]) -> None:
        """A real Node no real node of this run backs (its processes went with a stopped
        simulator): deleted, with its pods, so the pass makes the node again."""
        for name in [n for n, k8s in live.items() if is_real(k8s) and n not in self._real]:
            stale = [p for p in api.pods() if p["spec"].get("nodeName") == name and not gone(p)]
            log.warning("real node %s is gone (a stopped simulator's): deleting its Node and "
                        "%d pods, then making it again", name, len(stale))  # fmt: skip
            pods.remove_with_node(stale)
            api.delete_node(name)
            del live[name]

    def _release(self, name: str) -> list[str]:
        real = self._real.get(name)
        left = self.pool.release(real) if real is not None and self.pool is not None else []
        self._real.pop(name, None)
        self._drained_at.pop(name, None)
        return left
