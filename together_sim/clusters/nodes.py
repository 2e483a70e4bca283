"""A cluster's GPU nodes over time, because a count in the API is nodes that join, drain and go:
standard nodes added and removed by a PUT, preemptible ones filled toward the target and drained."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Collection
from typing import Final

from together_api.wire import ClusterStatus
from together_facts.values import GPUS_PER_NODE
from together_sim.clusters.context import Place
from together_sim.clusters.state import SimCluster, SimEvent, SimNode
from together_sim.errors import SimError
from together_sim.targeting import scale_down_order

__all__ = [
    "add_preemptible",
    "add_standard",
    "drain",
    "fill_time",
    "new_node",
    "note",
    "remove_node",
    "scale_standard",
    "set_preemptible_target",
]

_NAME_ALPHABET: Final = "bcdfghjklmnpqrstvwxz2456789"
"""Kubernetes' alphabet for generated name suffixes (no vowels, no look-alike digits)."""


def _suffix(seed: str) -> str:
    """Five stable name characters, as in Together's documented ``gpu-dp-hmqnh-nwlnj``."""
    digest = hashlib.sha256(seed.encode()).digest()
    return "".join(_NAME_ALPHABET[b % len(_NAME_ALPHABET)] for b in digest[:5])


def new_node(world: Place, c: SimCluster, *, preemptible: bool, ready_at: float) -> SimNode:
    """Named as Together's docs show: ``gpu-dp-<pool>-<node>`` for standard and
    ``gpu-preemptible-dp-<pool>-<node>`` for preemptible nodes (five-character parts)."""
    c.node_seq += 1
    prefix = "gpu-preemptible-dp" if preemptible else "gpu-dp"
    pool, name = _suffix(f"{c.cluster_id}:{prefix}"), _suffix(f"{c.cluster_id}:{c.node_seq}")
    node = SimNode(
        node_id=f"{prefix}-{pool}-{name}",
        preemptible=preemptible,
        created_at=world.now,
        ready_at=ready_at,
    )
    c.nodes.append(node)
    return node


def note(world: Place, c: SimCluster, node: SimNode, reason: str, message: str) -> None:
    """A node lifecycle event, as the cluster's ``node_lifecycle_events`` will show it. Reasons:
    ``TogetherNodeAdded`` when a preemptible node joins toward the target (the preemptible docs'
    name), ``TogetherScaledUp`` / ``TogetherScaledDown`` when standard nodes are added or removed
    or a lowered preemptible target drains one (the SDK's names)."""
    c.events.append(SimEvent(node_id=node.node_id, reason=reason, message=message, at=world.now))


def drain(
    world: Place,
    c: SimCluster,
    node: SimNode,
    reason: str,
    message: str,
    window: float | None = None,
) -> None:
    """Start the node's drain window (``window``, else Together's); removed when it ends."""
    node.draining_since = world.now
    node.drain_window = window
    node.reclaim_at = None
    note(world, c, node, reason, message)


def remove_node(world: Place, c: SimCluster, node: SimNode) -> None:
    c.nodes.remove(node)
    node.deleted_at = world.now
    c.deleted_nodes.append(node)
    if node.preemptible:
        c.next_fill_at = max(c.next_fill_at or 0.0, world.now + world.timings.fill_interval)


def add_standard(world: Place, c: SimCluster) -> None:
    """A new cluster's standard nodes, Ready when provisioning ends."""
    ready_at = c.created_at + world.timings.provisioning
    for _ in range(c.spec.num_gpus // GPUS_PER_NODE):
        new_node(world, c, preemptible=False, ready_at=ready_at)


def fill_time(world: Place, c: SimCluster) -> float | None:
    """When the next preemptible node joins, or None: not Ready, at target, or no spare."""
    if not c.provisioning_done or c.status != ClusterStatus.READY:
        return None
    wanted = c.preemptible_target // GPUS_PER_NODE
    if len(c.live(preemptible=True)) >= wanted:
        return None
    if world.preemptible_spare(c.spec.region, c.spec.gpu_type) < GPUS_PER_NODE:
        return None
    return max(c.next_fill_at or world.now, world.now)


def add_preemptible(world: Place, c: SimCluster) -> None:
    node = new_node(world, c, preemptible=True, ready_at=world.now)
    if world.reclaim_rate > 0:  # random reclaims: ``reclaim_rate`` per node-hour, seeded
        rng = random.Random(f"{world.seed}:{c.cluster_id}:{node.node_id}")
        node.reclaim_at = world.now + rng.expovariate(world.reclaim_rate / 3600.0)
    note(world, c, node, "TogetherNodeAdded", "Preemptible node added toward the target")
    c.next_fill_at = world.now + world.timings.fill_interval


def scale_standard(
    world: Place, c: SimCluster, num_gpus: int, marked: Collection[str] = frozenset()
) -> None:
    """Add or remove standard nodes: removed are the ones marked for targeted scale-down first,
    else the newest (:mod:`together_sim.targeting`); 409 without the capacity."""
    delta = num_gpus - c.spec.num_gpus
    if delta > world.standard_spare(c.spec.region, c.spec.gpu_type):
        raise SimError(409, "Out of stock")
    if delta > 0:
        planned = c.created_at + world.timings.provisioning
        ready_at = max(world.now + world.timings.node_boot, planned)
        for _ in range(delta // GPUS_PER_NODE):
            node = new_node(world, c, preemptible=False, ready_at=ready_at)
            note(world, c, node, "TogetherScaledUp", "Standard node added by scale-up")
    for node in scale_down_order(c.live(preemptible=False), -delta // GPUS_PER_NODE, marked):
        note(world, c, node, "TogetherScaledDown", "Standard node removed by scale-down")
        remove_node(world, c, node)
    c.spec.num_gpus = num_gpus


def set_preemptible_target(
    world: Place, c: SimCluster, target: int, marked: Collection[str] = frozenset()
) -> None:
    """Change the preemptible target; surplus nodes drain (``marked`` node ids first), a deficit
    fills later."""
    c.spec.num_preemptible_gpus = target
    active = [n for n in c.live(preemptible=True) if n.draining_since is None]
    surplus = len(active) - target // GPUS_PER_NODE
    for node in scale_down_order(active, surplus, marked):
        drain(world, c, node, "TogetherScaledDown", "Preemptible target lowered; draining")
    if c.next_fill_at is None or c.next_fill_at < world.now:
        c.next_fill_at = world.now + world.timings.fill_interval
