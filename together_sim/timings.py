"""How long each simulated lifecycle step takes (the CLI and tests shorten them)."""

from __future__ import annotations

from dataclasses import dataclass

from together_facts.values import DRAIN_WINDOW_SECONDS

__all__ = ["Timings"]


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
