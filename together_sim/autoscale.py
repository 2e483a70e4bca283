"""Together's own autoscaling of standard nodes (``auto_scale``), modelled minimally so programs
that use it can be tested: what Together documents and what the simulator assumes where it does
not say are in docs/simulator.md, "Together's autoscaling"."""

from __future__ import annotations

import logging
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Final

from together_facts.packing import nodes_to_add
from together_facts.values import GPUS_PER_NODE
from together_sim.clusters.state import SimCluster, SimNode
from together_sim.errors import SimError
from together_sim.model import World
from together_sim.targeting import scale_down_order

__all__ = [
    "SCALE_DOWN_UNNEEDED_SECONDS",
    "Demand",
    "bounds",
    "set_count",
    "step",
    "step_each",
]

SCALE_DOWN_UNNEEDED_SECONDS: Final = 600.0
"""How long a standard node above the floor has had no workload pod before it is removed: the
Cluster Autoscaler's ``--scale-down-unneeded-time`` default (10 minutes)."""

log = logging.getLogger("together_sim.autoscale")


@dataclass(frozen=True)
class Demand:
    """What the cluster's Kubernetes shows the autoscaler on one pass."""

    pending: tuple[int, ...] = ()
    """The GPUs of each Unschedulable pod a standard node could run (none asking for 0)."""
    free: Mapping[str, int] = field(default_factory=dict)
    """Free GPUs of each standard Node the pass saw (0 when cordoned); a standard node the
    world has and this does not name is not Ready in Kubernetes yet."""
    idle: frozenset[str] = frozenset()
    """Standard nodes (Ready) with no workload pod."""
    marked: frozenset[str] = frozenset()
    """Nodes marked for targeted scale-down."""


def bounds(c: SimCluster) -> tuple[int, int] | None:
    """(floor, ceiling) of an autoscaled cluster, or None without ``auto_scale``."""
    if not c.spec.auto_scale or c.spec.auto_scale_max_gpus is None:
        return None
    return int(c.autoscaler.get("floor", c.spec.num_gpus)), c.spec.auto_scale_max_gpus


def set_count(world: World, c: SimCluster, num_gpus: int) -> None:
    """The autoscaler's decision, given from outside: only inside the bounds."""
    found = bounds(c)
    if found is None:
        raise SimError(409, f"cluster {c.cluster_id} was not created with auto_scale")
    low, high = found
    if num_gpus % GPUS_PER_NODE or not low <= num_gpus <= high:
        raise SimError(
            400,
            f"num_gpus={num_gpus}: the autoscaler moves only in whole nodes within [{low}, {high}]",
            param="num_gpus",
        )
    world.scale_standard(c, num_gpus)


def step_each(world: World, demands: Mapping[str, Demand]) -> None:
    """One pass over every cluster whose Kubernetes showed something new. A scale-up the region
    has no capacity for (409 Out of stock) leaves that cluster as it is, to ask again on a later
    pass, and the others are still served; it is logged once per wait."""
    for cluster_id, demand in demands.items():
        c = world.clusters.get(cluster_id)
        if c is None:
            continue
        try:
            step(world, c, demand)
        except SimError as exc:
            if exc.status != 409:
                raise
            if not c.autoscaler.get("waiting_for_capacity"):
                log.warning("cluster %s: auto_scale waits for capacity: %s", cluster_id, exc)
            c.autoscaler["waiting_for_capacity"] = True
        else:
            c.autoscaler.pop("waiting_for_capacity", None)


def step(world: World, c: SimCluster, demand: Demand) -> None:
    """One autoscaler pass over what Kubernetes showed: add at once, up to the ceiling, the nodes
    pending pods need (``TogetherScaledUp``); else, only while no pod waits, remove one node above
    the floor unneeded for the window (``TogetherScaledDown``): a marked one first, else the
    newest. A busy node never goes."""
    found = bounds(c)
    if found is None or c.deleting_since is not None or not c.provisioning_done:
        return
    low, high = found
    missing = _nodes_missing(c, demand)
    room = (high - c.spec.num_gpus) // GPUS_PER_NODE
    if missing > 0 and room > 0:
        world.scale_standard(c, c.spec.num_gpus + GPUS_PER_NODE * min(missing, room))
        return
    idle = _idle_for(world, c, demand.idle)
    if not demand.pending and idle and c.spec.num_gpus > low:
        [chosen] = scale_down_order(idle, 1, demand.marked)
        world.scale_standard(c, c.spec.num_gpus - GPUS_PER_NODE, frozenset({chosen.node_id}))


def _nodes_missing(c: SimCluster, demand: Demand) -> int:
    """Standard nodes to add for the pending pods, packed onto the free GPUs of the Nodes
    Kubernetes shows, and onto every node it does not show Ready yet as a whole node on its way
    (booting, or not mirrored yet: the pods wait for it, so it is no reason to add another)."""
    free = [demand.free.get(n.node_id, GPUS_PER_NODE) for n in c.live(preemptible=False)]
    return nodes_to_add((g for g in demand.pending if g <= GPUS_PER_NODE), free)


def _idle_for(world: World, c: SimCluster, idle_now: Collection[str]) -> list[SimNode]:
    """The standard nodes still in the cluster and still idle that have been idle for the whole
    unneeded window (oldest first). Keeps when each became idle, and forgets a node as soon as
    it is busy or gone, so a node that comes back idle starts a new window."""
    present = {n.node_id: n for n in c.live(preemptible=False)}
    since: dict[str, float] = c.autoscaler.setdefault("idle_since", {})
    for node_id in list(since):
        if node_id not in idle_now or node_id not in present:
            del since[node_id]
    for node_id in idle_now:
        if node_id in present:
            since.setdefault(node_id, world.now)
    return [
        node
        for node_id, node in present.items()
        if node_id in since and world.now - since[node_id] >= SCALE_DOWN_UNNEEDED_SECONDS
    ]
