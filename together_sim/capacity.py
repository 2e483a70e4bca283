"""Together's GPUs per region x GPU type, and what is spare once the clusters hold theirs: clusters
in one pool compete, which is why a create can be 409 ``Out of stock`` and a fill can wait."""

from __future__ import annotations

from collections.abc import Iterable

from together_sim.catalogue import Capacity
from together_sim.clusters.state import SimCluster

__all__ = ["Pool", "preemptible_spare", "standard_spare", "totals_of"]

Pool = tuple[str, str]
"""(region, GPU type): clusters share the capacity of one."""


def totals_of(capacity: dict[Pool, Capacity], region: str, gpu_type: str) -> Capacity:
    """The pool's totals (the catalogue's defaults until an admin sets them)."""
    return capacity.setdefault((region, gpu_type), Capacity())


def _in_pool(clusters: Iterable[SimCluster], region: str, gpu_type: str) -> list[SimCluster]:
    return [c for c in clusters if (c.spec.region, c.spec.gpu_type) == (region, gpu_type)]


def standard_spare(
    capacity: dict[Pool, Capacity], clusters: Iterable[SimCluster], region: str, gpu_type: str
) -> int:
    """Standard capacity is held from create until the cluster disappears."""
    used = sum(c.spec.num_gpus for c in _in_pool(clusters, region, gpu_type))
    return totals_of(capacity, region, gpu_type).standard_gpus - used


def preemptible_spare(
    capacity: dict[Pool, Capacity], clusters: Iterable[SimCluster], region: str, gpu_type: str
) -> int:
    """Preemptible capacity is held by every live preemptible node, draining ones included, until
    it is removed: a reclaimed node's capacity returns only then, so its replacement starts after
    the drain window."""
    used = sum(c.allocated_preemptible_gpus() for c in _in_pool(clusters, region, gpu_type))
    return totals_of(capacity, region, gpu_type).preemptible_gpus - used
