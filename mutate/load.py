"""The machine's load while a run goes on: the team's machines are shared (other builds and test
runs beside this one), so a wall time means little without the load it was measured under."""

from __future__ import annotations

import os
import threading
from types import TracebackType

__all__ = ["LoadSampler"]


class LoadSampler:
    """Samples the 1-minute load average every ``every`` seconds between enter and exit."""

    def __init__(self, every: float = 10.0) -> None:
        self.every = every
        self.samples: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="load-sampler", daemon=True)

    def __enter__(self) -> LoadSampler:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while True:
            self.samples.append(os.getloadavg()[0])
            if self._stop.wait(self.every):
                return

    def words(self) -> str:
        """`load average 9.8 on average, 17.1 at most (1-minute, every 10 s)`."""
        if not self.samples:
            return "load average not sampled"
        mean = sum(self.samples) / len(self.samples)
        return (
            f"load average {mean:.1f} on average, {max(self.samples):.1f} at most (1-minute, "
            f"sampled every {self.every:.0f} s)"
        )
