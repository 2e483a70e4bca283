"""A simulated cluster's node behind one interface: a KWOK node or a real node, each made and
deleted the same way by the cluster's provider (:mod:`together_sim.nodes.provider`), and each
saying what it left on the host."""

from __future__ import annotations

from typing import Any, Final, Protocol, Self, runtime_checkable

from together_sim.plane.client import KubeApi

__all__ = ["DRAIN_STARTED", "NODE_LABEL", "SimNode", "drain_node"]

Obj = dict[str, Any]
NODE_LABEL: Final = "together-sim/kwok"
"""Every Node the simulator made carries the key: ``true`` on a KWOK node (KWOK manages exactly
those), ``false`` on a real one (its kubelet registers it so)."""
DRAIN_STARTED: Final = "together-sim/drain-started"
"""The Node's annotation holding the simulated T+0 of its drain (set once, at the cordon)."""


@runtime_checkable
class SimNode(Protocol):
    """What the cluster's mirror asks of any node, as kind's and kwokctl's node providers do:
    the mirror, the reclaim path and the autoscaler's view know nothing else of a node."""

    @property
    def name(self) -> str: ...

    def make(self) -> Self:
        """Make the node and return it (a real one starts in its own thread: :meth:`ready`
        says when). Only the cluster's :class:`~together_sim.nodes.provider.NodeProvider`
        calls it."""
        ...

    def ready(self, k8s: Obj | None) -> bool:
        """Whether the node serves, given its Node object as the API server lists it (None:
        not listed): a KWOK node once it exists, a real node once its kubelet registered it."""
        ...

    @property
    def failure(self) -> str:
        """Why the node does not run, "" while it is made or runs."""
        ...

    def may_go(self, pods: list[Obj], drained_at: float | None, now: float) -> bool:
        """Whether the node may be deleted now (``now``, ``drained_at``: real monotonic
        seconds): never before its pods' grace periods allow."""
        ...

    def delete(self) -> list[str]:
        """Undo everything the node made; returns what it left (empty: nothing)."""
        ...

    def status(self) -> dict[str, Any]:
        """What ``GET /_sim/kubernetes`` shows of the node (its state, its processes)."""
        ...


def drain_node(api: KubeApi, k8s: Obj, since: float, reason: str, message: str) -> None:
    """T+0 of the reclaim sequence, the same on every kind of node (so no method of theirs): the
    cordon with the simulated start in :data:`DRAIN_STARTED`, then the Warning Event with the
    drain's reason. Its pods are then evicted by the pod clock (a real node's kubelet sends them
    SIGTERM)."""
    api.patch_node(k8s["metadata"]["name"], {
        "metadata": {"annotations": {DRAIN_STARTED: repr(since)}},
        "spec": {"unschedulable": True},
    })  # fmt: skip
    api.node_event(k8s, reason=reason, message=message)
