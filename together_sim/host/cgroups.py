"""A real node's cgroup in every hierarchy, v1 (one per controller) or v2 (one unified tree):
made with its controllers delegated, joined before a program runs, killed whole, removed."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path
from typing import Final

from together_sim.host.processes import zombie

__all__ = [
    "CGROUP_ROOT",
    "PARENT",
    "cgroup_dirs",
    "cgroup_pids",
    "delegate_controllers",
    "in_cgroup",
    "kill_cgroup",
    "make_cgroup",
    "remove_cgroup",
    "shared_cgroup_parents",
    "unified",
    "v2_unavailable",
]

CGROUP_ROOT: Final = Path("/sys/fs/cgroup")
PARENT: Final = "together-sim"
"""The parent of every real node's cgroup (and the image seed's), below the root of each
hierarchy; on a cgroup v2 host with systemd it is instead the simulator's delegated scope
(:mod:`together_sim.host.systemd`)."""


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


def make_cgroup(relative: str, root: Path | None = None, *, leaf: bool = False) -> None:
    """Create ``relative`` in every hierarchy. On v1 a new cpuset gets its parent's CPUs and
    memory nodes (an empty one admits no process). On a v2 host each cgroup below the root
    delegates its controllers to its children (``cgroup.subtree_control``), which the kubelet
    needs below the node's cgroup; a ``leaf`` delegates none, since v2 admits processes only in
    a cgroup that delegates nothing (the node's processes run in such a leaf). The root's own
    delegation is the host's (systemd's) to make: :func:`v2_unavailable` says when it is
    missing, and nothing here changes it."""
    for attempt in range(3):  # another simulator may remove an empty parent meanwhile
        try:
            for hierarchy in _hierarchies(root):
                v2 = _v2_layout(hierarchy, root)
                current = hierarchy
                for part in Path(relative).parts:
                    parent, current = current, current / part
                    if v2 and parent != hierarchy:
                        delegate_controllers(parent)
                    if current.is_dir():
                        continue
                    current.mkdir(exist_ok=True)
                    for knob in ("cpuset.cpus", "cpuset.mems"):
                        if (parent / knob).exists() and not v2:
                            (current / knob).write_text((parent / knob).read_text())
                if v2 and not leaf:
                    delegate_controllers(current)
            return
        except FileNotFoundError:
            if attempt == 2:
                raise


def _v2_layout(hierarchy: Path, root: Path | None) -> bool:
    """Whether ``hierarchy`` is the whole tree of a cgroup v2 host (not the ``unified`` mount of
    a v1 hybrid host, where the v1 hierarchies hold the controllers)."""
    return hierarchy == (root or CGROUP_ROOT) and unified(hierarchy)


V2_CONTROLLERS: Final = ("cpu", "memory", "pids")
"""What the kubelet needs delegated on a cgroup v2 host."""


def v2_unavailable(root: Path | None = None) -> str:
    """Why real nodes cannot run on this cgroup v2 host ("" when they can, or on v1): the root
    must delegate the controllers the kubelet needs (systemd does)."""
    root = root or CGROUP_ROOT
    if not unified(root):
        return ""
    missing = [
        c for c in V2_CONTROLLERS if c not in (root / "cgroup.subtree_control").read_text().split()
    ]
    if missing:
        return (
            f"real nodes need the {', '.join(missing)} controllers delegated at the cgroup v2 "
            f"root: echo '{' '.join('+' + c for c in missing)}' > "
            f"{root / 'cgroup.subtree_control'}"
        )
    return ""


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
        for walked, _, files in _walk(directory):
            if "cgroup.procs" not in files:
                continue
            try:
                pids.update(int(p) for p in (walked / "cgroup.procs").read_text().split())
            except OSError:  # removed meanwhile: its processes are gone
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


def remove_cgroup(relative: str, timeout: float = 5.0) -> list[Path]:
    """Remove ``relative`` and everything below it in every hierarchy, deepest first (a cgroup
    whose last process is still exiting refuses for a moment); returns what is left."""
    deadline = time.monotonic() + timeout
    while True:
        left = []
        for directory in cgroup_dirs(relative):
            for walked, _, _ in _walk(directory, deepest_first=True):
                _rmdir(walked)
            if directory.is_dir():
                left.append(directory)
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


def _walk(
    directory: Path, *, deepest_first: bool = False
) -> list[tuple[Path, list[str], list[str]]]:
    """``directory`` and every cgroup below it, with their files. A cgroup may vanish during the
    walk (its owner, systemd or another simulator, removes it): os.walk skips what it can no
    longer list, where Path.rglob raises FileNotFoundError."""
    return [
        (Path(d), dirs, files) for d, dirs, files in os.walk(directory, topdown=not deepest_first)
    ]


def _rmdir(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.rmdir()


def shared_cgroup_parents() -> list[Path]:
    """``together-sim`` in every hierarchy: the parent of every real node's cgroup."""
    return [h / PARENT for h in _hierarchies()]
