"""A process as the host knows it: pid and start time (a pid alone may name a later process), and
whether it has ended."""

from __future__ import annotations

from pathlib import Path

__all__ = ["process_started", "zombie"]


def process_started(pid: int) -> int | None:
    """When process ``pid`` started (clock ticks after boot, ``/proc/<pid>/stat`` field 22), or
    None when there is no such process: with the pid, it tells a process from a later one that
    got the same pid."""
    try:
        fields = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
        return int(fields[19])
    except (OSError, IndexError, ValueError):
        return None


def zombie(pid: int) -> bool:
    """Whether ``pid`` has ended (a zombie, or no such process)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return True
