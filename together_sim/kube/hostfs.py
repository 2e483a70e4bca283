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
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, Final

__all__ = [
    "CGROUP_ROOT",
    "JOURNALS",
    "KUBELET_SYSCTLS",
    "LOCK",
    "RUN_DIR",
    "SHARED_SETTINGS",
    "cgroup_dirs",
    "cgroup_pids",
    "hold_sysctls",
    "holder_alive",
    "host_lock",
    "in_cgroup",
    "kill_cgroup",
    "make_cgroup",
    "mounts_under",
    "process_started",
    "read_sysctls",
    "release_sysctls",
    "remove_cgroup",
    "remove_empty_parents",
    "remove_tree",
    "save_json",
    "shared_cgroup_parents",
    "unmount_under",
    "write_sysctls",
    "zombie",
]

CGROUP_ROOT: Final = Path("/sys/fs/cgroup")
KUBELET_SYSCTLS: Final = ("vm/overcommit_memory", "kernel/panic", "kernel/panic_on_oops")
"""What the kubelet rewrites at start (its ``protectKernelDefaults: false``): 0 -> 1, 1 -> 10 and
0 -> 1 on a Debian host. They are not per namespace, so the host keeps them until restored."""
_MNT_DETACH: Final = 2
_libc = ctypes.CDLL(None, use_errno=True)


def _hierarchies(root: Path | None = None) -> list[Path]:
    """The mounted cgroup hierarchies: every v1 controller directory, or the v2 root alone
    (cgroup v2, the unified layout of current Debian, Ubuntu and Fedora)."""
    root = root or CGROUP_ROOT
    if unified(root):
        return [root]
    return sorted(
        p
        for p in root.iterdir()
        if p.is_dir() and not p.is_symlink() and (p / "cgroup.procs").exists()
    )


def unified(root: Path | None = None) -> bool:
    """Whether ``root`` is a cgroup v2 (unified) hierarchy: its root has ``cgroup.controllers``."""
    return ((root or CGROUP_ROOT) / "cgroup.controllers").exists()


def cgroup_dirs(relative: str, root: Path | None = None) -> list[Path]:
    """``relative`` (e.g. ``together-sim/tsim0-n1``) in every hierarchy, existing or not."""
    return [h / relative for h in _hierarchies(root)]


def make_cgroup(relative: str, root: Path | None = None) -> None:
    """Create ``relative`` in every hierarchy. On v1 a new cpuset gets its parent's CPUs and
    memory nodes (an empty one admits no process); on v2 each parent delegates its controllers
    to its children (``cgroup.subtree_control``), which the kubelet needs below the node's
    cgroup (cpu, memory, pids...)."""
    for attempt in range(3):  # another simulator may remove an empty parent meanwhile
        try:
            for hierarchy in _hierarchies(root):
                current = hierarchy
                for part in Path(relative).parts:
                    parent, current = current, current / part
                    if unified(hierarchy):
                        delegate_controllers(parent)
                    if current.is_dir():
                        continue
                    current.mkdir(exist_ok=True)
                    for knob in ("cpuset.cpus", "cpuset.mems"):
                        if (parent / knob).exists() and not unified(hierarchy):
                            (current / knob).write_text((parent / knob).read_text())
                if unified(hierarchy):
                    delegate_controllers(current)
            return
        except FileNotFoundError:
            if attempt == 2:
                raise


def delegate_controllers(cgroup: Path) -> list[str]:
    """Enable for the children of a v2 ``cgroup`` every controller it has (``+cpu +memory``... in
    ``cgroup.subtree_control``); returns those enabled. A controller the kernel refuses here (a
    threaded cgroup, a process in an inner cgroup) is named in the error."""
    available = (cgroup / "cgroup.controllers").read_text().split()
    enabled = set((cgroup / "cgroup.subtree_control").read_text().split())
    wanted = [c for c in available if c not in enabled]
    if wanted:
        try:
            (cgroup / "cgroup.subtree_control").write_text(" ".join(f"+{c}" for c in wanted))
        except OSError as exc:
            raise OSError(
                exc.errno, f"cannot delegate {' '.join(wanted)} in {cgroup}: {exc.strerror}"
            ) from exc
    return available


def in_cgroup(relative: str, args: list[str]) -> list[str]:
    """``args`` started inside the cgroup ``relative`` of every hierarchy: a shell joins it and
    then execs them, so nothing of the process ever runs outside it (no window for a kill to
    leave it elsewhere), and a join that fails ends the start with exit status 121 instead of a
    process that runs where no cleanup looks."""
    procs = [str(d / "cgroup.procs") for d in cgroup_dirs(relative)]
    join = 'for f in $TSIM_CGROUP_PROCS; do echo $$ > "$f" || exit 121; done; exec "$@"'
    return ["env", f"TSIM_CGROUP_PROCS={' '.join(procs)}", "sh", "-c", join, "sh", *args]


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
        pids = {p for p in cgroup_pids(relative) if not zombie(p)}
        if not pids or time.monotonic() > deadline:
            return pids
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.05)


def zombie(pid: int) -> bool:
    """Whether ``pid`` has ended (a zombie, or no such process)."""
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


def shared_cgroup_parents() -> list[Path]:
    """``together-sim`` in every hierarchy: the parent of every real node's cgroup."""
    return [h / "together-sim" for h in _hierarchies()]


def remove_empty_parents() -> list[str]:
    """What every simulator shares, once nobody uses it: the ``together-sim`` cgroup of each
    hierarchy, the journals' directory, the lock file and ``/run/together-sim`` itself (another
    simulator's nodes may still be in them: only empty ones go). Returns what it removed."""
    removed: list[str] = []
    with host_lock():
        for parent in shared_cgroup_parents():
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


def remove_tree(path: Path) -> None:
    """``shutil.rmtree`` that first unmounts what is below ``path`` and refuses to remove through
    a mount that stays (a volume's files would go with it)."""
    if unmount_under(path):
        return
    shutil.rmtree(path, ignore_errors=True)


RUN_DIR: Final = Path("/run/together-sim")
"""What every simulator on the machine shares: the kernel settings' record, the journals, and
each real node's sockets and state (a tmpfs: a reboot clears it with what it names)."""
JOURNALS: Final = RUN_DIR / "journals"
"""Every journal of host changes on the machine (:mod:`together_sim.kube.journal`)."""
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


def holder(pid: int, what: object) -> str:
    """A holder of the kernel settings: ``<pid>@<start time>:<what>``."""
    return f"{pid}@{process_started(pid)}:{what}"


def holder_alive(name: str) -> bool:
    """Whether the process that holds as ``name`` still runs: the same pid *and* start time (a
    pid reused by a later process does not hold). A holder written without its start time (by
    an older simulator) counts while its pid runs."""
    pid, _, started = name.split(":", 1)[0].partition("@")
    try:
        now = process_started(int(pid))
    except ValueError:
        return False
    if now is None:
        return False
    return not started or started == str(now)


def _settings_update(change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """Read, change and write the shared record under an exclusive lock; a holder whose process
    is gone (a simulator killed with SIGKILL) no longer counts; the settings are restored and the
    record removed once nobody holds real nodes."""
    with host_lock():
        data: dict[str, Any] = (
            json.loads(SHARED_SETTINGS.read_text())
            if SHARED_SETTINGS.exists()
            else {"original": read_sysctls(), "holders": []}
        )
        change(data)
        data["holders"] = sorted({h for h in data["holders"] if holder_alive(h)})
        if data["holders"]:
            save_json(SHARED_SETTINGS, data)
        else:
            write_sysctls(data["original"])
            SHARED_SETTINGS.unlink(missing_ok=True)
        return data


def hold_sysctls(name: str) -> dict[str, str]:
    """``name`` (:func:`holder`) is about to start a kubelet: the settings as they are now are
    kept, unless another holder kept them first (then they may be rewritten already). Returns
    the settings as they were before any holder, which the last one out writes back."""
    original: dict[str, str] = _settings_update(lambda data: data["holders"].append(name))[
        "original"
    ]
    return original


def release_sysctls(name: str) -> None:
    """``name`` holds no real node any more: the last holder out restores the settings (and a
    holder whose process is gone no longer counts, so a killed simulator's are restored too)."""
    if not SHARED_SETTINGS.exists():
        return  # nobody holds them: nothing to restore
    _settings_update(lambda data: data.update(holders=[h for h in data["holders"] if h != name]))


def read_sysctls(names: Iterable[str] = KUBELET_SYSCTLS) -> dict[str, str]:
    return {n: (Path("/proc/sys") / n).read_text().strip() for n in names}


def write_sysctls(values: dict[str, str]) -> None:
    for name, value in values.items():
        (Path("/proc/sys") / name).write_text(value)


def save_json(path: Path, data: object) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(data, indent=1))
    os.replace(tmp, path)
