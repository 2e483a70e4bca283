"""The reclaim as a value: SIGTERM (or SIGINT) sets a flag the training loop polls and starts the
drain window's deadline, so the loop decides where to stop instead of being cut mid-step."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from types import FrameType
from typing import Any, Final

DRAIN_WINDOW_ENV: Final = "DRAIN_WINDOW_SECONDS"
"""Set by `CheckpointingWorker` (and the drill) to the pod's terminationGracePeriodSeconds."""
DEFAULT_GRACE_SECONDS: Final = 300.0
"""Together's drain window: a reclaimed node is removed 300 s after its pods got SIGTERM."""
RECLAIM_SIGNALS: Final = (signal.SIGTERM, signal.SIGINT)

Clock = Callable[[], float]
Handler = Callable[[int, FrameType | None], Any]


def grace_from_env(environ: Mapping[str, str] = os.environ) -> float:
    """The grace period a reclaim gives this process: ``$DRAIN_WINDOW_SECONDS``, else 300 s."""
    raw = environ.get(DRAIN_WINDOW_ENV)
    if raw is None or raw == "":
        return DEFAULT_GRACE_SECONDS
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if value <= 0:
        raise ValueError(
            f"{DRAIN_WINDOW_ENV}={raw!r} is not a positive number of seconds; set it to the pod's "
            "terminationGracePeriodSeconds (CheckpointingWorker does), or unset it for 300"
        )
    return value


class Reclaim:
    """Whether this process has been asked to stop, and by when it must have stopped.

    The first SIGTERM or SIGINT wins: its signal, its wall-clock time (``received_at``, what the
    status file records) and a deadline ``grace_seconds`` later on the monotonic ``clock`` (what
    ``seconds_left`` counts down). Later signals change nothing: the kubelet does not extend the
    grace period either. ``exit_code`` is what a process stopped by that signal reports (143 for
    SIGTERM): exit with it after the checkpoint, never 0, or the Job counts the index as done.
    """

    def __init__(
        self,
        grace_seconds: float | None = None,
        *,
        clock: Clock = time.monotonic,
        wall_clock: Clock = time.time,
    ) -> None:
        self.grace_seconds = grace_from_env() if grace_seconds is None else grace_seconds
        self._clock = clock
        self._wall_clock = wall_clock
        self.signum: int | None = None
        self.received_at: float | None = None
        self._received_monotonic: float | None = None
        self._previous: dict[int, Any] = {}

    @classmethod
    def install(
        cls,
        signals: Iterable[int] = RECLAIM_SIGNALS,
        grace_seconds: float | None = None,
        *,
        clock: Clock = time.monotonic,
        wall_clock: Clock = time.time,
    ) -> Reclaim:
        """A Reclaim whose handler is installed for ``signals``.

        A handler already installed (a framework's own, PyTorch Lightning's or Ray's) is kept and
        called after the flag is set, so installing this breaks neither. Python's default SIGINT
        handler (which raises KeyboardInterrupt mid-step) is the one handler not chained: the
        loop polls the flag instead. Must run in the main thread, as every signal handler must.
        """
        if threading.current_thread() is not threading.main_thread():
            raise RuntimeError(
                "Reclaim.install() must run in the main thread: Python delivers signals only "
                "there; install it before starting the training threads"
            )
        reclaim = cls(grace_seconds, clock=clock, wall_clock=wall_clock)
        for signum in signals:
            reclaim._previous[signum] = signal.signal(signum, reclaim._handle)
        return reclaim

    def uninstall(self) -> None:
        """Put back the handlers that were there before :meth:`install`."""
        for signum, previous in self._previous.items():
            signal.signal(signum, previous if previous is not None else signal.SIG_DFL)
        self._previous.clear()

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.notice(signum)
        previous = self._previous.get(signum)
        if callable(previous) and previous is not signal.default_int_handler:
            previous(signum, frame)

    def notice(self, signum: int) -> None:
        """Record a reclaim signal (what the handler does; a test or a framework callback may
        call it directly). Only the first one counts."""
        if self.signum is None:
            self.signum = signum
            self.received_at = self._wall_clock()
            self._received_monotonic = self._clock()

    @property
    def requested(self) -> bool:
        """True once a reclaim signal arrived: checkpoint at the next step boundary, then exit."""
        return self.signum is not None

    @property
    def signal_name(self) -> str | None:
        return signal.Signals(self.signum).name if self.signum is not None else None

    @property
    def exit_code(self) -> int:
        """128 + the signal (143 for SIGTERM, 130 for SIGINT), as if the signal had stopped it."""
        return 128 + (self.signum if self.signum is not None else signal.SIGTERM)

    def seconds_left(self) -> float | None:
        """Seconds until the grace period ends (negative once it has), None before a reclaim."""
        if self._received_monotonic is None:
            return None
        return self._received_monotonic + self.grace_seconds - self._clock()
