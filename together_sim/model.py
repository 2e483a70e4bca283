"""The world: capacity, the clusters' lifecycle and the volumes over a virtual clock. Pure:
no HTTP, no SQLite, no real time (a cluster's state is :mod:`together_sim.clusters.state`).

The simulator never runs a background thread. Each request first calls
:meth:`World.advance` with the current virtual time; the world then replays,
in time order, every event that became due since the last request
(provisioning phases, preemptible fill, drain-window ends, random reclaims,
deletions). Events of all clusters are interleaved because clusters share
the capacity of a region x GPU type.

Modelling choices (Together does not document these):

* ``allocated_preemptible_gpus`` counts live preemptible nodes, draining ones
  included, until they are removed; the fill treats them as allocated too, so
  a replacement for a reclaimed node starts only after the drain window.
* Node names follow Together's docs: ``gpu-dp-<pool>-<node>`` for standard and
  ``gpu-preemptible-dp-<pool>-<node>`` for preemptible nodes (five-character Kubernetes-style
  parts). Lifecycle reasons: ``TogetherNodeAdded`` when a preemptible node joins toward the
  target (the preemptible docs' name), ``TogetherScaledUp`` / ``TogetherScaledDown`` when a PUT
  adds or removes standard nodes (the SDK's names), ``TogetherPreemptionNotified`` on a reclaim.
* Lowering the preemptible target drains surplus nodes with reason ``TogetherScaledDown`` over
  the same drain window, and lowering ``num_gpus`` removes standard nodes: the nodes marked for
  targeted scale-down first, else the newest (:mod:`together_sim.targeting`).
* A reclaimed node's capacity returns to the spare pool when it is removed.
* Standard capacity is held from create until the cluster disappears.
* Failed provisioning: the latest phase becomes
  ``CLUSTER_PHASE_ACCEPTANCE_TESTS_FAILED`` while ``status`` keeps its last
  provisioning value (the status enum has no failed value); after
  ``failed_teardown`` seconds Together tears the cluster down (``Deleting``,
  then 404).
"""

from __future__ import annotations

import hashlib
import random
import uuid
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Final

from together_api.wire import DRAIN_WINDOW_SECONDS, GPUS_PER_NODE, ClusterStatus
from together_sim.catalogue import Capacity
from together_sim.clusters.state import (
    FAILED_PHASE,
    PROVISIONING_PLAN,
    SimCluster,
    SimEvent,
    SimNode,
)
from together_sim.errors import SimError
from together_sim.targeting import scale_down_order
from together_sim.volumes import Volumes

__all__ = ["Timings", "World"]


@dataclass(frozen=True)
class Timings:
    """Simulated seconds for each lifecycle step."""

    provisioning: float = 360.0
    fill_interval: float = 60.0
    drain_window: float = float(DRAIN_WINDOW_SECONDS)
    deleting: float = 60.0
    failed_teardown: float = 120.0
    node_boot: float = 120.0
    event_retention: float = 72 * 3600.0
    volume_provisioning: float = 60.0
    volume_deleting: float = 30.0


@dataclass
class World:
    """All clusters plus capacity, advanced lazily to the virtual ``now``."""

    timings: Timings = field(default_factory=Timings)
    reclaim_rate: float = 0.0
    seed: int = 0
    now: float = 0.0
    clusters: dict[str, SimCluster] = field(default_factory=dict)
    capacity: dict[tuple[str, str], Capacity] = field(default_factory=dict)
    volumes: Volumes = field(init=False)

    def __post_init__(self) -> None:
        self.volumes = Volumes(self.timings.volume_provisioning, self.timings.volume_deleting)

    # ----------------------------------------------------------------- capacity

    def capacity_of(self, region: str, gpu_type: str) -> Capacity:
        return self.capacity.setdefault((region, gpu_type), Capacity())

    def _pool(self, region: str, gpu_type: str) -> list[SimCluster]:
        return [
            c
            for c in self.clusters.values()
            if (c.spec.region, c.spec.gpu_type) == (region, gpu_type)
        ]

    def standard_spare(self, region: str, gpu_type: str) -> int:
        used = sum(c.spec.num_gpus for c in self._pool(region, gpu_type))
        return self.capacity_of(region, gpu_type).standard_gpus - used

    def preemptible_spare(self, region: str, gpu_type: str) -> int:
        used = sum(c.allocated_preemptible_gpus() for c in self._pool(region, gpu_type))
        return self.capacity_of(region, gpu_type).preemptible_gpus - used

    # ------------------------------------------------------------------- events

    def advance(self, to: float) -> None:
        """Apply, in time order, every event due at or before ``to``."""
        while True:
            due = self._next_event()
            if due is None or due[0] > to:
                break
            when, action = due
            self.now = max(self.now, when)
            action()
        self.now = max(self.now, to)

    def _next_event(self) -> tuple[float, Callable[[], None]] | None:
        best: tuple[float, Callable[[], None]] | None = None
        removal = self.volumes.next_removal()
        if removal is not None:
            best = (removal[0], lambda: self.volumes.forget(removal[1]))
        for cluster in list(self.clusters.values()):
            for when, action in self._events_of(cluster):
                if best is None or when < best[0]:
                    best = (when, action)
        return best

    def _events_of(self, c: SimCluster) -> list[tuple[float, Callable[[], None]]]:
        t = self.timings
        if c.deleting_since is not None:
            return [(c.deleting_since + t.deleting, lambda: self._forget(c))]
        if c.failed_at is not None:
            return [(c.failed_at + t.failed_teardown, lambda: self._start_deleting(c))]
        events: list[tuple[float, Callable[[], None]]] = []
        if not c.provisioning_done:
            status, _, fraction = PROVISIONING_PLAN[c.plan_index]
            when = c.created_at + fraction * t.provisioning
            if status == ClusterStatus.READY and c.fail_provisioning:
                events.append((when, lambda: self.fail(c.cluster_id)))
            else:
                events.append((when, lambda: self._enter_phase(c)))
        for node in c.nodes:
            if node.draining_since is not None:
                window = t.drain_window if node.drain_window is None else node.drain_window
                events.append((node.draining_since + window, self._remover(c, node)))
            elif node.reclaim_at is not None:
                events.append((node.reclaim_at, self._reclaimer(c, node)))
        fill_at = self._fill_time(c)
        if fill_at is not None:
            events.append((fill_at, lambda: self._add_preemptible(c)))
        return events

    def _forget(self, c: SimCluster) -> None:
        del self.clusters[c.cluster_id]
        self.volumes.release(c.volume_ids, c.cluster_id, self.now)

    def _remover(self, c: SimCluster, node: SimNode) -> Callable[[], None]:
        return lambda: self._remove_node(c, node)

    def _reclaimer(self, c: SimCluster, node: SimNode) -> Callable[[], None]:
        return lambda: self._drain(c, node, "TogetherPreemptionNotified", _PREEMPT_MESSAGE)

    def _enter_phase(self, c: SimCluster) -> None:
        status, phase, _ = PROVISIONING_PLAN[c.plan_index]
        c.status = status
        c.phases.append((f"CLUSTER_PHASE_{phase}", self.now))
        c.plan_index += 1
        if status == ClusterStatus.READY:
            c.first_ready_at = self.now
            c.next_fill_at = self.now + self.timings.fill_interval
            self.volumes.bind(c.volume_ids, c.cluster_id)

    def _fill_time(self, c: SimCluster) -> float | None:
        if not c.provisioning_done or c.status != ClusterStatus.READY:
            return None
        wanted = c.preemptible_target // GPUS_PER_NODE
        if len(c.live(preemptible=True)) >= wanted:
            return None
        if self.preemptible_spare(c.spec.region, c.spec.gpu_type) < GPUS_PER_NODE:
            return None
        return max(c.next_fill_at or self.now, self.now)

    def _add_preemptible(self, c: SimCluster) -> None:
        node = self._new_node(c, preemptible=True, ready_at=self.now)
        if self.reclaim_rate > 0:
            rng = random.Random(f"{self.seed}:{c.cluster_id}:{node.node_id}")
            node.reclaim_at = self.now + rng.expovariate(self.reclaim_rate / 3600.0)
        self._event(c, node, "TogetherNodeAdded", "Preemptible node added toward the target")
        c.next_fill_at = self.now + self.timings.fill_interval

    def _new_node(self, c: SimCluster, *, preemptible: bool, ready_at: float) -> SimNode:
        c.node_seq += 1
        prefix = "gpu-preemptible-dp" if preemptible else "gpu-dp"
        pool, name = _suffix(f"{c.cluster_id}:{prefix}"), _suffix(f"{c.cluster_id}:{c.node_seq}")
        node = SimNode(
            node_id=f"{prefix}-{pool}-{name}",
            preemptible=preemptible,
            created_at=self.now,
            ready_at=ready_at,
        )
        c.nodes.append(node)
        return node

    def _event(self, c: SimCluster, node: SimNode, reason: str, message: str) -> None:
        c.events.append(SimEvent(node_id=node.node_id, reason=reason, message=message, at=self.now))

    def _drain(
        self,
        c: SimCluster,
        node: SimNode,
        reason: str,
        message: str,
        window: float | None = None,
    ) -> None:
        node.draining_since = self.now
        node.drain_window = window
        node.reclaim_at = None
        self._event(c, node, reason, message)

    def _remove_node(self, c: SimCluster, node: SimNode) -> None:
        c.nodes.remove(node)
        node.deleted_at = self.now
        c.deleted_nodes.append(node)
        if node.preemptible:
            c.next_fill_at = max(c.next_fill_at or 0.0, self.now + self.timings.fill_interval)

    def _start_deleting(self, c: SimCluster) -> None:
        c.status = ClusterStatus.DELETING
        c.deleting_since = self.now
        c.phases.append(("CLUSTER_PHASE_DELETING", self.now))

    # --------------------------------------------------------------- operations

    def add(self, cluster: SimCluster) -> SimCluster:
        """Register a validated new cluster: phases start, standard nodes are planned."""
        spare = self.standard_spare(cluster.spec.region, cluster.spec.gpu_type)
        if cluster.spec.num_gpus > spare:
            raise SimError(409, "Out of stock")
        self.clusters[cluster.cluster_id] = cluster
        ready_at = cluster.created_at + self.timings.provisioning
        for _ in range(cluster.spec.num_gpus // GPUS_PER_NODE):
            self._new_node(cluster, preemptible=False, ready_at=ready_at)
        self._enter_phase(cluster)
        return cluster

    def get(self, cluster_id: str) -> SimCluster:
        cluster = self.clusters.get(cluster_id)
        if cluster is None:
            raise SimError(404, f"cluster {cluster_id} not found", param="cluster_id")
        return cluster

    def new_cluster_id(self) -> str:
        return str(uuid.uuid4())

    def scale_standard(
        self, c: SimCluster, num_gpus: int, marked: Collection[str] = frozenset()
    ) -> None:
        """Add or remove standard nodes (``marked`` ones first); 409 without the capacity."""
        delta = num_gpus - c.spec.num_gpus
        if delta > self.standard_spare(c.spec.region, c.spec.gpu_type):
            raise SimError(409, "Out of stock")
        if delta > 0:
            planned = c.created_at + self.timings.provisioning
            ready_at = max(self.now + self.timings.node_boot, planned)
            for _ in range(delta // GPUS_PER_NODE):
                node = self._new_node(c, preemptible=False, ready_at=ready_at)
                self._event(c, node, "TogetherScaledUp", "Standard node added by scale-up")
        for node in scale_down_order(c.live(preemptible=False), -delta // GPUS_PER_NODE, marked):
            self._event(c, node, "TogetherScaledDown", "Standard node removed by scale-down")
            self._remove_node(c, node)
        c.spec.num_gpus = num_gpus

    def set_preemptible_target(
        self, c: SimCluster, target: int, marked: Collection[str] = frozenset()
    ) -> None:
        """Change the preemptible target; surplus nodes drain (``marked`` node ids first), a
        deficit fills later."""
        c.spec.num_preemptible_gpus = target
        active = [n for n in c.live(preemptible=True) if n.draining_since is None]
        surplus = len(active) - target // GPUS_PER_NODE
        for node in scale_down_order(active, surplus, marked):
            self._drain(c, node, "TogetherScaledDown", "Preemptible target lowered; draining")
        if c.next_fill_at is None or c.next_fill_at < self.now:
            c.next_fill_at = self.now + self.timings.fill_interval

    def delete(self, cluster_id: str) -> None:
        """Start (or repeat) deletion: ``Deleting`` for a while, then gone."""
        cluster = self.get(cluster_id)
        if cluster.deleting_since is None:
            self._start_deleting(cluster)

    def reclaim(
        self,
        cluster_id: str,
        count: int,
        node_ids: list[str] | None = None,
        drain_seconds: float | None = None,
    ) -> list[str]:
        """Together takes back ``count`` preemptible nodes (oldest first), or exactly the
        ``node_ids`` given (each must be an active preemptible node of the cluster); each is
        removed ``drain_seconds`` after the notice (Together's 300 s when None)."""
        cluster = self.get(cluster_id)
        active = [n for n in cluster.live(preemptible=True) if n.draining_since is None]
        if node_ids is None:
            chosen = active[:count]
        else:
            by_id = {n.node_id: n for n in active}
            unknown = [n for n in node_ids if n not in by_id]
            if unknown:
                raise SimError(
                    400,
                    f"node_ids {unknown} are not active (undrained) preemptible nodes of cluster "
                    f"{cluster_id}; choose among {sorted(by_id)}",
                    param="node_ids",
                )
            chosen = [by_id[n] for n in dict.fromkeys(node_ids)]
        message = _PREEMPT_MESSAGE if drain_seconds is None else _preempt_message(drain_seconds)
        for node in chosen:
            self._drain(cluster, node, "TogetherPreemptionNotified", message, drain_seconds)
        return [n.node_id for n in chosen]

    def fail(self, cluster_id: str) -> None:
        """Provisioning fails now: acceptance tests failed, teardown follows."""
        cluster = self.get(cluster_id)
        if cluster.provisioning_done:
            raise SimError(409, f"cluster {cluster_id} already finished provisioning")
        if cluster.failed_at is None and cluster.deleting_since is None:
            cluster.failed_at = self.now
            cluster.phases.append((FAILED_PHASE, self.now))


_NAME_ALPHABET: Final = "bcdfghjklmnpqrstvwxz2456789"
"""Kubernetes' alphabet for generated name suffixes (no vowels, no look-alike digits)."""


def _suffix(seed: str) -> str:
    """Five stable name characters, as in Together's documented ``gpu-dp-hmqnh-nwlnj``."""
    digest = hashlib.sha256(seed.encode()).digest()
    return "".join(_NAME_ALPHABET[b % len(_NAME_ALPHABET)] for b in digest[:5])


def _preempt_message(window: float) -> str:
    return f"Node is being preempted by Together; it will be removed within {window:g}s"


_PREEMPT_MESSAGE: Final = _preempt_message(DRAIN_WINDOW_SECONDS)
