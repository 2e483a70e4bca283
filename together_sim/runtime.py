"""One running simulator: virtual clock, world, store, faults and request log."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from together_sim.clock import VirtualClock
from together_sim.faults import FaultInjector, RequestLog
from together_sim.model import Timings, World
from together_sim.store import Store

__all__ = ["SimulatorConfig", "SimulatorRuntime"]


@dataclass(frozen=True)
class SimulatorConfig:
    """Everything the CLI flags control; the defaults suit a demo."""

    state_dir: Path | None = None
    api_keys: tuple[str, ...] = ("sim-key",)
    time_scale: float = 1.0
    admin: bool = False
    reclaim_rate: float = 0.0
    seed: int | None = None
    timings: Timings = field(default_factory=Timings)


class SimulatorRuntime:
    """Owns the state; every request goes through :meth:`transaction`."""

    def __init__(self, config: SimulatorConfig) -> None:
        self.config = config
        self.world = World(
            timings=config.timings, reclaim_rate=config.reclaim_rate, seed=config.seed or 0
        )
        self.store = Store(config.state_dir)
        resumed = self.store.load(self.world)
        # Virtual time resumes where the previous run stopped (downtime does not count).
        start = self.world.now if resumed else time.time()
        self.world.now = start
        self.clock = VirtualClock(start, config.time_scale)
        self.faults = FaultInjector(config.seed)
        self.requests = RequestLog()
        self._lock = threading.Lock()

    @contextmanager
    def transaction(self) -> Iterator[World]:
        """Serialise access, bring the world up to virtual now, persist afterwards."""
        with self._lock:
            self.world.advance(self.clock.now())
            try:
                yield self.world
            finally:
                self.store.save(self.world)

    def advance(self, seconds: float) -> float:
        with self._lock:
            now = self.clock.advance(seconds)
            self.world.advance(now)
            self.store.save(self.world)
            return now
