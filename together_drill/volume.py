"""Where the drill reads the Job's checkpoint volume from: a directory on this machine (the local
world's volume, or ``--volume-dir``), or a reader pod of its own inside the cluster, which mounts
the Job's claim read-only and prints what it sees. Both give the same observation: every file
with its size, inode and mtime, and together_worker's ``status.json`` files, parsed one way."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from stat import S_ISREG
from typing import Any, Final, NamedTuple, Protocol

from together_drill.evidence import FileSeen, Snapshot
from together_worker.status import STATUS_FILE

Runs = dict[str, list[dict[str, Any]]]
"""together_worker's runs by the directory their status file is in (an index's)."""


class Observation(NamedTuple):
    """What one read of the volume saw, and when (wall clock of the machine that read it)."""

    files: Snapshot
    runs: Runs
    at: float


NOTHING: Final = Observation({}, {}, 0.0)


class VolumeReader(Protocol):
    """The volume as the drill can read it; ``readable`` False: it cannot (the verdict then
    says ``unverified`` for a save it could not see)."""

    @property
    def readable(self) -> bool: ...

    def read(self, after: float | None = None) -> Observation:
        """The volume now; with ``after`` (``time.time()``), a read taken no earlier."""


def runs_from(texts: dict[str, str]) -> Runs:
    """together_worker's runs from its status files' texts, by their path relative to the volume:
    each index's runs (the directory the file is in), oldest first; a file that is not the
    library's JSON is skipped."""
    found: Runs = {}
    for path, text in sorted(texts.items()):
        try:
            runs = json.loads(text).get("runs", [])
        except (ValueError, AttributeError):
            continue
        if not isinstance(runs, list):
            continue
        parent = path.rsplit("/", 1)[0] if "/" in path else ""
        found[parent.rsplit("/", 1)[-1]] = [r for r in runs if isinstance(r, dict)]
    return found


LISTER: Final = r"""
import json, os, stat, sys, time
root, tick = sys.argv[1], float(sys.argv[2])
while True:
    files, status = [], {}
    for top, dirs, names in os.walk(root):
        for name in names:
            path = os.path.join(top, name)
            try:
                st = os.lstat(path)
                if not stat.S_ISREG(st.st_mode):  # one lstat: a symlink is not a file here
                    continue
                rel = os.path.relpath(path, root)
                files.append([rel, st.st_size, st.st_ino, st.st_mtime])
                if name == STATUS:
                    with open(path) as f:
                        status[rel] = f.read()
            except OSError:
                continue
    print(json.dumps({"t": time.time(), "files": sorted(files), "status": status}), flush=True)
    time.sleep(tick)
""".replace("STATUS", repr(STATUS_FILE))
"""The reader pod's program: standard library only (any image with python3 runs it). It prints
one line a tick: the wall time, every file (path, size, inode, mtime) and each status file's
text. Python 3.6 and later."""

TICK_SECONDS: Final = 0.25


def parse_line(line: str) -> Observation | None:
    """One line of the lister's output as an observation (None: not one of its lines)."""
    try:
        data = json.loads(line)
        files = {
            str(rel): FileSeen(int(size), int(inode), float(mtime))
            for rel, size, inode, mtime in data["files"]
        }
        texts = {str(k): str(v) for k, v in data["status"].items()}
        return Observation(files, runs_from(texts), float(data["t"]))
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def observe(volume: Path) -> Observation:
    """The volume as the lister would print it, read here (``--volume-dir``, the local world)."""
    files: Snapshot = {}
    texts: dict[str, str] = {}
    for top, _, names in os.walk(volume):
        for name in names:
            path = Path(top) / name
            try:
                seen = path.lstat()
                if not S_ISREG(seen.st_mode):  # as the lister: one lstat, a symlink is no file
                    continue
                rel = str(path.relative_to(volume))
                files[rel] = FileSeen(seen.st_size, seen.st_ino, seen.st_mtime)
                if name == STATUS_FILE:
                    texts[rel] = path.read_text()
            except OSError:
                continue  # written or removed as we looked
    return Observation(files, runs_from(texts), time.time())


class LocalReader:
    """A directory on this machine where the volume is mounted."""

    def __init__(self, volume: Path) -> None:
        self.volume = volume

    @property
    def readable(self) -> bool:
        return True

    def read(self, after: float | None = None) -> Observation:
        return observe(self.volume)


class NoReader:
    """No way to read the volume: every save the files would show is unseen."""

    @property
    def readable(self) -> bool:
        return False

    def read(self, after: float | None = None) -> Observation:
        return NOTHING


__all__ = [
    "LISTER",
    "LocalReader",
    "NoReader",
    "Observation",
    "VolumeReader",
    "observe",
    "parse_line",
    "runs_from",
]
