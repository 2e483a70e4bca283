"""The simulator's virtual clock: real elapsed time scaled, plus explicit advances."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

__all__ = ["VirtualClock"]


class VirtualClock:
    """``now = start + real_elapsed * time_scale + advanced`` (epoch seconds).

    ``time_scale=0`` freezes time except for :meth:`advance`, which is how the
    in-process tests make every state transition explicit.
    """

    def __init__(
        self,
        start: float,
        time_scale: float = 1.0,
        real: Callable[[], float] = time.monotonic,
    ) -> None:
        if time_scale < 0:
            raise ValueError("time_scale must be >= 0")
        self._start = start
        self._scale = time_scale
        self._real = real
        self._real0 = real()
        self._advanced = 0.0
        self._lock = threading.Lock()

    def now(self) -> float:
        with self._lock:
            return self._start + (self._real() - self._real0) * self._scale + self._advanced

    def advance(self, seconds: float) -> float:
        if seconds < 0:
            raise ValueError("the virtual clock only moves forward")
        with self._lock:
            self._advanced += seconds
        return self.now()
