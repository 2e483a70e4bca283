"""What the drill does to a cluster, whichever it is: the local world it starts (world.py) or an
existing cluster reached through a kubeconfig (remote.py). The run (run.py) speaks only this."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from together_drill.kube import Kube
from together_drill.manifest import DrillJob
from together_drill.volume import VolumeReader

Say = Callable[[str], None]
"""Prints a progress line (stderr)."""


class Cluster(Protocol):
    """A cluster the drill reclaims nodes of; :meth:`close` always runs, however the drill ends,
    and leaves the cluster as the drill found it."""

    @property
    def kube(self) -> Kube: ...

    @property
    def reader(self) -> VolumeReader:
        """How the drill reads the Job's checkpoint volume (a directory here, a reader pod in
        the cluster, or nothing); ready once :meth:`prepare` ran."""

    def eligible(self) -> set[str] | None:
        """The nodes a reclaim may take (None: any node a pod of the Job runs on)."""

    def prepare(self, job: DrillJob, say: Say) -> None:
        """Make ready what the Job needs before it is created (claims, namespace)."""

    def reclaim(self, node: str, pods: list[str], namespace: str, say: Say) -> None:
        """Start Together's drain of ``node``: cordon, SIGTERM to ``pods`` with their grace."""

    def refill(self, node: str, since: float, deadline: float, say: Say) -> float | None:
        """After the reclaimed pods ended: capacity back, and seconds since ``since``
        (``time.monotonic()`` of the reclaim) when it was, None if it was not."""

    def close(self, job: DrillJob | None, say: Say) -> None:
        """Leave everything as found (``job``, which this drill created, deleted unless kept;
        None: it created none)."""
