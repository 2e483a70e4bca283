"""What the cluster modules need from the world, as a Protocol: they import this, never
:class:`together_sim.model.World` (which imports them)."""

from __future__ import annotations

from collections.abc import Collection
from typing import Protocol

from together_sim.clusters.state import SimCluster
from together_sim.timings import Timings
from together_sim.volumes import Volumes

__all__ = ["Operated", "Place"]


class Place(Protocol):
    """The world as one cluster sees it: the clock, the timings, the shared capacity and
    volumes, and the other clusters."""

    now: float
    timings: Timings
    reclaim_rate: float
    seed: int
    clusters: dict[str, SimCluster]
    volumes: Volumes

    def standard_spare(self, region: str, gpu_type: str) -> int: ...

    def preemptible_spare(self, region: str, gpu_type: str) -> int: ...


class Operated(Place, Protocol):
    """The world as a create or an update of a cluster uses it (:mod:`.operations`): a place
    that also takes, finds and scales clusters."""

    def new_cluster_id(self) -> str: ...

    def add(self, cluster: SimCluster) -> SimCluster: ...

    def get(self, cluster_id: str) -> SimCluster: ...

    def scale_standard(
        self, c: SimCluster, num_gpus: int, marked: Collection[str] = frozenset()
    ) -> None: ...

    def set_preemptible_target(
        self, c: SimCluster, target: int, marked: Collection[str] = frozenset()
    ) -> None: ...
