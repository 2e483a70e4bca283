"""A process as the host knows it: pid and start time (a pid alone may name a later process), and
whether it has ended."""

from __future__ import annotations

import ctypes
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Final

__all__ = ["die_with_parent", "process_started", "runs", "wait_ready", "zombie"]

_PR_SET_PDEATHSIG: Final = 1
_prctl = ctypes.CDLL(None, use_errno=True).prctl  # resolved here: the child must not dlopen


def die_with_parent() -> None:
    """``preexec_fn`` of every host process the simulator starts: the kernel SIGKILLs it when
    the thread that started it ends, so not even a SIGKILLed simulator leaves it running (only
    prctl runs between fork and exec)."""
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def process_started(pid: int) -> int | None:
    """When process ``pid`` started (clock ticks after boot, ``/proc/<pid>/stat`` field 22), or
    None when there is no such process: with the pid, it tells a process from a later one that
    got the same pid."""
    try:
        fields = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
        return int(fields[19])
    except (OSError, IndexError, ValueError):
        return None


def runs(pid: int, started: int) -> bool:
    """Whether the process ``pid`` that started at ``started`` still runs: not a later process
    that got its pid, and not a zombie (killed, its parent has not reaped it yet)."""
    return process_started(pid) == started and not zombie(pid)


def zombie(pid: int) -> bool:
    """Whether ``pid`` has ended (a zombie, or no such process)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return True


def wait_ready(
    what: str,
    ready: Callable[[], bool],
    timeout: float,
    processes: Mapping[str, subprocess.Popen[bytes]],
    logs: Path,
    cancelled: threading.Event,
    cancelled_message: str,
    *,
    of: str = "",
    ignore: tuple[type[Exception], ...] = (),
    interval: float = 0.1,
    more_time: str = "",
) -> None:
    """Poll ``ready`` until it holds; a cancel, a started process that exits (the error names its
    log in ``logs``) or ``timeout`` seconds end the wait with an error. A control plane, a real
    node and the image seed start their processes this one way; ``of`` names whose (" of
    cluster X"), and ``more_time`` how to give a slow host more than ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        if cancelled.is_set():
            raise RuntimeError(cancelled_message)
        for name, proc in processes.items():
            if proc.poll() is not None:
                raise RuntimeError(
                    f"{name}{of} exited with {proc.returncode}; see {logs / (name + '.log')}"
                )
        try:
            if ready():
                return
        except ignore:
            pass
        if time.monotonic() > deadline:
            hint = f"; {more_time}" if more_time else ""
            raise RuntimeError(f"{what}{of} not ready after {timeout:g} s{hint}")
        time.sleep(interval)
