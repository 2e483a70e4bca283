"""What the cluster modules need from the world, as a Protocol: they import this, never
:class:`together_sim.model.World` (which imports them)."""

from __future__ import annotations

from typing import Protocol

from together_sim.clusters.state import SimCluster
from together_sim.timings import Timings
from together_sim.volumes import Volumes

__all__ = ["Place"]


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
