"""What every simulator on the machine shares under ``/run/together-sim``: one lock, the journals'
directory, and their removal by the last simulator out."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from together_sim.host import cgroups

__all__ = ["JOURNALS", "LOCK", "RUN_DIR", "host_lock", "remove_empty_parents", "save_json"]

RUN_DIR: Final = Path("/run/together-sim")
"""What every simulator on the machine shares: the kernel settings' record, the journals, and
each real node's sockets and state (a tmpfs: a reboot clears it with what it names)."""
JOURNALS: Final = RUN_DIR / "journals"
"""Every journal of host changes on the machine (:mod:`together_sim.host.journal`)."""
LOCK: Final = RUN_DIR / ".lock"
"""One lock for every change to what simulators share here: the kernel settings' record, the
journals, a bridge's index, the sweep. The last simulator out removes it."""
_local = threading.local()


@contextlib.contextmanager
def host_lock() -> Iterator[None]:
    """Hold the machine-wide lock (re-entrant within a thread: a sweep releases kernel settings).
    The lock file is removed by the last simulator out (:func:`remove_empty_parents`), so a
    holder checks that the file it locked is still the one at the path, else tries again."""
    if getattr(_local, "depth", 0):
        _local.depth += 1
        try:
            yield
        finally:
            _local.depth -= 1
        return
    while True:
        RUN_DIR.mkdir(mode=0o700, parents=True, exist_ok=True)
        try:
            fd = os.open(LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except FileNotFoundError:  # the directory went between the mkdir and the open
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                same = os.fstat(fd).st_ino == os.stat(LOCK).st_ino
            except FileNotFoundError:
                same = False
            if not same:
                continue
            _local.depth = 1
            try:
                yield
            finally:
                _local.depth = 0
            return
        finally:
            os.close(fd)


def remove_empty_parents() -> list[str]:
    """What every simulator shares, once nobody uses it: the ``together-sim`` cgroup of each
    hierarchy, the journals' directory, the lock file and ``/run/together-sim`` itself (another
    simulator's nodes may still be in them: only empty ones go). Returns what it removed."""
    removed: list[str] = []
    with host_lock():
        for parent in cgroups.shared_cgroup_parents():
            if parent.is_dir() and _rmdir_ok(parent):
                removed.append(f"cgroup {parent}")
        if JOURNALS.is_dir() and _rmdir_ok(JOURNALS):
            removed.append(f"directory {JOURNALS}")
        rest = [p for p in RUN_DIR.iterdir() if p != LOCK] if RUN_DIR.is_dir() else []
        if not rest and _local.depth == 1:  # not when a caller goes on under the lock
            LOCK.unlink(missing_ok=True)  # under the lock: a waiter sees it went and retries
            if _rmdir_ok(RUN_DIR):
                removed.append(f"directory {RUN_DIR}")
    return removed


def _rmdir_ok(path: Path) -> bool:
    try:
        path.rmdir()
    except OSError:
        return False
    return True


def save_json(path: Path, data: object) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(data, indent=1))
    os.replace(tmp, path)
