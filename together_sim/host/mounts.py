"""Mounts under a real node's directories (pod sandboxes, volumes, overlays): found, unmounted, and
never removed through (a shared volume's files would go with the directory)."""

from __future__ import annotations

import ctypes
import shutil
from pathlib import Path
from typing import Final

__all__ = ["mounts_under", "remove_tree", "unmount_under"]

_MNT_DETACH: Final = 2
_libc = ctypes.CDLL(None, use_errno=True)


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


def remove_tree(path: Path) -> None:
    """``shutil.rmtree`` that first unmounts what is below ``path`` and refuses to remove through
    a mount that stays (a volume's files would go with it)."""
    if unmount_under(path):
        return
    shutil.rmtree(path, ignore_errors=True)
