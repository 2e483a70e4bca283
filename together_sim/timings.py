"""How long each simulated lifecycle step takes (the CLI and tests shorten them)."""

from __future__ import annotations

from dataclasses import dataclass

from together_facts.values import DRAIN_WINDOW_SECONDS

__all__ = ["CONTROL_PLANE_START_SECONDS", "Timings"]

CONTROL_PLANE_START_SECONDS = 90.0
"""Real seconds, not simulated: how long each step of a cluster's control-plane start (etcd
healthy, the API server ready) may take by default. A start takes 5 to 20 s on a loaded laptop
and about 156 s in a VM without KVM; ``--control-plane-timeout`` gives a slow host more."""


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
