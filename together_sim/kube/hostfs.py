"""What a real node leaves on the host besides its network: cgroups, mounts, processes and the
kernel settings its kubelet rewrites, each with the call that removes or restores it."""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import json
import os
import shutil
import signal
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Final

__all__ = [
    "CGROUP_ROOT",
    "KUBELET_SYSCTLS",
    "POOLS",
    "RUN_DIR",
    "SHARED_SETTINGS",
    "cgroup_dirs",
    "cgroup_pids",
    "hold_sysctls",
    "kill_cgroup",
    "make_cgroup",
    "mounts_under",
    "move_to_cgroup",
    "process_started",
    "read_sysctls",
    "release_sysctls",
    "remove_cgroup",
    "remove_empty_parents",
    "remove_tree",
    "save_json",
    "unmount_under",
    "write_sysctls",
]

CGROUP_ROOT: Final = Path("/sys/fs/cgroup")
KUBELET_SYSCTLS: Final = ("vm/overcommit_memory", "kernel/panic", "kernel/panic_on_oops")
"""What the kubelet rewrites at start (its ``protectKernelDefaults: false``): 0 -> 1, 1 -> 10 and
0 -> 1 on a Debian host. They are not per namespace, so the host keeps them until restored."""
_MNT_DETACH: Final = 2
_libc = ctypes.CDLL(None, use_errno=True)


def _hierarchies() -> list[Path]:
    """The mounted cgroup hierarchies: every v1 controller directory, or the v2 root alone."""
    if (CGROUP_ROOT / "cgroup.controllers").exists():
        return [CGROUP_ROOT]
    return sorted(
        p
        for p in CGROUP_ROOT.iterdir()
        if p.is_dir() and not p.is_symlink() and (p / "cgroup.procs").exists()
    )


def cgroup_dirs(relative: str) -> list[Path]:
    """``relative`` (e.g. ``together-sim/tsim0-n1``) in every hierarchy, existing or not."""
    return [h / relative for h in _hierarchies()]


def make_cgroup(relative: str) -> None:
    """Create ``relative`` in every hierarchy; a new cpuset gets its parent's CPUs and memory
    nodes (an empty one admits no process)."""
    for attempt in range(3):  # another simulator may remove an empty parent meanwhile
        try:
            for hierarchy in _hierarchies():
                current = hierarchy
                for part in Path(relative).parts:
                    parent, current = current, current / part
                    if current.is_dir():
                        continue
                    current.mkdir(exist_ok=True)
                    for knob in ("cpuset.cpus", "cpuset.mems"):
                        if (parent / knob).exists():
                            (current / knob).write_text((parent / knob).read_text())
            return
        except FileNotFoundError:
            if attempt == 2:
                raise


def move_to_cgroup(pid: int, relative: str) -> None:
    for directory in cgroup_dirs(relative):
        with contextlib.suppress(OSError):  # gone already (it crashed at once): noticed later
            (directory / "cgroup.procs").write_text(str(pid))


def cgroup_pids(relative: str) -> set[int]:
    """Every process in ``relative`` or below, in any hierarchy."""
    pids: set[int] = set()
    for directory in cgroup_dirs(relative):
        for procs in directory.rglob("cgroup.procs") if directory.is_dir() else ():
            try:
                pids.update(int(p) for p in procs.read_text().split())
            except OSError:
                continue
    return pids


def kill_cgroup(relative: str, timeout: float = 10.0) -> set[int]:
    """SIGKILL every process in ``relative`` and below until none is left (a process forking
    meanwhile is caught by the next round); returns what is still there after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        pids = {p for p in cgroup_pids(relative) if not _zombie(p)}
        if not pids or time.monotonic() > deadline:
            return pids
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.05)


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return True


def remove_cgroup(relative: str, timeout: float = 5.0) -> list[Path]:
    """Remove ``relative`` and everything below it in every hierarchy, deepest first (a cgroup
    whose last process is still exiting refuses for a moment); returns what is left."""
    deadline = time.monotonic() + timeout
    while True:
        left = []
        for directory in cgroup_dirs(relative):
            if not directory.is_dir():
                continue
            for sub in sorted((d for d in directory.rglob("*") if d.is_dir()), reverse=True):
                _rmdir(sub)
            _rmdir(directory)
            if directory.is_dir():
                left.append(directory)
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


def _rmdir(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.rmdir()


def mounts_under(*roots: Path) -> list[str]:
    """The mount points at or below ``roots``, deepest first (``/proc/self/mountinfo``)."""
    prefixes = [str(r.resolve()) for r in roots]
    found = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        point = line.split()[4].encode().decode("unicode_escape")
        if any(point == p or point.startswith(p + "/") for p in prefixes):
            found.append(point)
    return sorted(set(found), key=lambda m: (-m.count("/"), m))


def unmount_under(*roots: Path) -> list[str]:
    """Unmount everything at or below ``roots`` (a lazy unmount for a busy one); returns what is
    still mounted. Always before removing such a directory: a hostPath volume is bind-mounted in
    the kubelet's directory, and removing through the mount would delete the volume's files."""
    for _ in range(3):
        points = mounts_under(*roots)
        if not points:
            return []
        for point in points:
            if _libc.umount2(point.encode(), 0) != 0:
                _libc.umount2(point.encode(), _MNT_DETACH)
    return mounts_under(*roots)


def remove_empty_parents() -> None:
    """The directories every real node shares (``together-sim`` in each cgroup hierarchy, the
    run directory), once empty: another simulator's nodes may still be in them."""
    for hierarchy in _hierarchies():
        _rmdir(hierarchy / "together-sim")
    _rmdir(POOLS)  # once no simulator runs any
    _rmdir(RUN_DIR)


def remove_tree(path: Path) -> None:
    """``shutil.rmtree`` that first unmounts what is below ``path`` and refuses to remove through
    a mount that stays (a volume's files would go with it)."""
    if unmount_under(path):
        return
    shutil.rmtree(path, ignore_errors=True)


RUN_DIR: Final = Path("/run/together-sim")
"""What every simulator on the machine shares: the kernel settings' record and the pools'."""
POOLS: Final = RUN_DIR / "pools"
"""One entry per running real-node pool (``nodepool.sweep_dead_pools`` reads them)."""
SHARED_SETTINGS: Final = RUN_DIR / "sysctls.json"
"""The kernel settings as they were before any simulator's first real node, and who holds real
nodes now: several simulators on one machine share the settings, so the last one restores them."""


def process_started(pid: int) -> int | None:
    """When process ``pid`` started (clock ticks after boot, ``/proc/<pid>/stat`` field 22), or
    None when there is no such process: with the pid, it tells a process from a later one that
    got the same pid."""
    try:
        fields = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
        return int(fields[19])
    except (OSError, IndexError, ValueError):
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _settings_update(change: Callable[[dict[str, Any]], None]) -> None:
    """Read, change and write the shared record under an exclusive lock; a holder whose process
    is gone (a simulator killed with SIGKILL) no longer counts; the settings are restored and the
    record removed once nobody holds real nodes."""
    SHARED_SETTINGS.parent.mkdir(parents=True, exist_ok=True)
    with (SHARED_SETTINGS.parent / ".lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        data: dict[str, Any] = (
            json.loads(SHARED_SETTINGS.read_text())
            if SHARED_SETTINGS.exists()
            else {"original": read_sysctls(), "holders": []}
        )
        change(data)
        data["holders"] = sorted({h for h in data["holders"] if _alive(int(h.split(":")[0]))})
        if data["holders"]:
            save_json(SHARED_SETTINGS, data)
        else:
            write_sysctls(data["original"])
            SHARED_SETTINGS.unlink(missing_ok=True)


def hold_sysctls(holder: str) -> None:
    """``holder`` (``<pid>:<anything>``) is about to start a kubelet: the settings as they are
    now are kept, unless another holder kept them first (then they may be rewritten already)."""
    _settings_update(lambda data: data["holders"].append(holder))


def release_sysctls(holder: str) -> None:
    """``holder`` holds no real node any more: the last holder out restores the settings."""
    _settings_update(lambda data: data.update(holders=[h for h in data["holders"] if h != holder]))


def read_sysctls(names: Iterable[str] = KUBELET_SYSCTLS) -> dict[str, str]:
    return {n: (Path("/proc/sys") / n).read_text().strip() for n in names}


def write_sysctls(values: dict[str, str]) -> None:
    for name, value in values.items():
        (Path("/proc/sys") / name).write_text(value)


def save_json(path: Path, data: object) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(data, indent=1))
    os.replace(tmp, path)
