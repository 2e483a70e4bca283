"""The world: every cluster, volume and capacity pool over a virtual clock, and the one entry point
the HTTP layer calls, kept pure (no HTTP, no SQLite, no real time) so tests drive it directly."""

from __future__ import annotations

import uuid
from collections.abc import Collection
from dataclasses import dataclass, field

from together_sim import capacity, scheduler
from together_sim.catalogue import Capacity
from together_sim.clusters import lifecycle, nodes, reclaims
from together_sim.clusters.state import SimCluster
from together_sim.errors import found
from together_sim.timings import Timings
from together_sim.volumes import Volumes

__all__ = ["Timings", "World"]


@dataclass
class World:
    """All clusters plus capacity, advanced lazily to the virtual ``now``: a facade whose
    concerns live with their objects (:mod:`together_sim.scheduler` for time,
    :mod:`together_sim.capacity`, :mod:`together_sim.clusters`, :mod:`together_sim.volumes`)."""

    timings: Timings = field(default_factory=Timings)
    reclaim_rate: float = 0.0
    """Random reclaims per preemptible node-hour (0: only the admin endpoint reclaims)."""
    seed: int = 0
    now: float = 0.0
    clusters: dict[str, SimCluster] = field(default_factory=dict)
    capacity: dict[capacity.Pool, Capacity] = field(default_factory=dict)
    volumes: Volumes = field(init=False)

    def __post_init__(self) -> None:
        self.volumes = Volumes(self.timings.volume_provisioning, self.timings.volume_deleting)

    def advance(self, to: float) -> None:
        """Apply, in time order, every event due at or before ``to``."""
        scheduler.advance(self, to)

    # ----------------------------------------------------------------- capacity

    def capacity_of(self, region: str, gpu_type: str) -> Capacity:
        return capacity.totals_of(self.capacity, region, gpu_type)

    def standard_spare(self, region: str, gpu_type: str) -> int:
        return capacity.standard_spare(self.capacity, self.clusters.values(), region, gpu_type)

    def preemptible_spare(self, region: str, gpu_type: str) -> int:
        return capacity.preemptible_spare(self.capacity, self.clusters.values(), region, gpu_type)

    # ----------------------------------------------------------------- clusters

    def add(self, cluster: SimCluster) -> SimCluster:
        """Register a validated new cluster: phases start, standard nodes are planned."""
        lifecycle.admit(self, cluster)
        return cluster

    def get(self, cluster_id: str) -> SimCluster:
        return found(self.clusters, cluster_id, "cluster")

    def new_cluster_id(self) -> str:
        return str(uuid.uuid4())

    def scale_standard(
        self, c: SimCluster, num_gpus: int, marked: Collection[str] = frozenset()
    ) -> None:
        """Add or remove standard nodes (``marked`` ones first); 409 without the capacity."""
        nodes.scale_standard(self, c, num_gpus, marked)

    def set_preemptible_target(
        self, c: SimCluster, target: int, marked: Collection[str] = frozenset()
    ) -> None:
        """Change the preemptible target; surplus nodes drain (``marked`` first)."""
        nodes.set_preemptible_target(self, c, target, marked)

    def delete(self, cluster_id: str) -> None:
        """Start (or repeat) deletion: ``Deleting`` for a while, then gone."""
        lifecycle.start_deleting(self, self.get(cluster_id))

    def reclaim(
        self,
        cluster_id: str,
        count: int,
        node_ids: list[str] | None = None,
        drain_seconds: float | None = None,
    ) -> list[str]:
        """See :func:`together_sim.clusters.reclaims.reclaim`."""
        return reclaims.reclaim(self, self.get(cluster_id), count, node_ids, drain_seconds)

    def fail(self, cluster_id: str) -> None:
        """Provisioning fails now: acceptance tests failed, teardown follows."""
        lifecycle.fail(self, self.get(cluster_id))
