"""Together taking preemptible nodes back: a ``TogetherPreemptionNotified`` notice, then the node
drains for the drain window (300 s) and is removed. Reclaims come at random (``reclaim_at``, set
when the node joins) or from the admin endpoint, for tests and demos."""

from __future__ import annotations

from typing import Final

from together_facts.values import DRAIN_WINDOW_SECONDS
from together_sim.clusters.context import Place
from together_sim.clusters.nodes import drain
from together_sim.clusters.state import SimCluster, SimNode
from together_sim.errors import SimError

__all__ = ["PREEMPTED", "reclaim", "reclaim_now"]

PREEMPTED: Final = "TogetherPreemptionNotified"


def _message(window: float) -> str:
    return f"Node is being preempted by Together; it will be removed within {window:g}s"


def reclaim_now(world: Place, c: SimCluster, node: SimNode, window: float | None = None) -> None:
    """The notice: the node drains for ``window`` seconds (Together's 300 s when None)."""
    message = _message(DRAIN_WINDOW_SECONDS if window is None else window)
    drain(world, c, node, PREEMPTED, message, window)


def reclaim(
    world: Place,
    c: SimCluster,
    count: int,
    node_ids: list[str] | None = None,
    drain_seconds: float | None = None,
) -> list[str]:
    """Together takes back ``count`` preemptible nodes (oldest first), or exactly the
    ``node_ids`` given (each must be an active preemptible node of the cluster); each is
    removed ``drain_seconds`` after the notice (Together's 300 s when None)."""
    active = [n for n in c.live(preemptible=True) if n.draining_since is None]
    if node_ids is None:
        chosen = active[:count]
    else:
        by_id = {n.node_id: n for n in active}
        unknown = [n for n in node_ids if n not in by_id]
        if unknown:
            raise SimError(
                400,
                f"node_ids {unknown} are not active (undrained) preemptible nodes of cluster "
                f"{c.cluster_id}; choose among {sorted(by_id)}",
                param="node_ids",
            )
        chosen = [by_id[n] for n in dict.fromkeys(node_ids)]
    for node in chosen:
        reclaim_now(world, c, node, drain_seconds)
    return [n.node_id for n in chosen]
