"""The three kernel settings the kubelet rewrites (they are not per namespace): held by every
simulator with real nodes, restored by the last holder out, a killed holder no longer counting."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Final

from together_sim.host import shared
from together_sim.host.held import HeldSetting, holder, holder_alive

__all__ = [
    "KUBELET_SYSCTLS",
    "SHARED_SETTINGS",
    "hold_sysctls",
    "holder",
    "holder_alive",
    "read_sysctls",
    "release_sysctls",
    "settings",
    "write_sysctls",
]

KUBELET_SYSCTLS: Final = ("vm/overcommit_memory", "kernel/panic", "kernel/panic_on_oops")
"""What the kubelet rewrites at start (its ``protectKernelDefaults: false``): 0 -> 1, 1 -> 10 and
0 -> 1 on a Debian host. They are not per namespace, so the host keeps them until restored."""
SHARED_SETTINGS: Final = shared.RUN_DIR / "sysctls.json"
"""The kernel settings as they were before any simulator's first real node, and who holds real
nodes now: several simulators on one machine share the settings, so the last one restores them."""


def settings() -> HeldSetting[dict[str, str]]:
    """The kernel settings as every simulator on the machine holds them (:mod:`~.held`)."""
    return HeldSetting(SHARED_SETTINGS, read=read_sysctls, restore=write_sysctls)


def hold_sysctls(name: str) -> dict[str, str]:
    """``name`` (:func:`holder`) is about to start a kubelet: the settings as they are now are
    kept, unless another holder kept them first (then they may be rewritten already). Returns
    the settings as they were before any holder, which the last one out writes back."""
    return settings().hold(name)


def release_sysctls(name: str) -> None:
    """``name`` holds no real node any more: the last holder out restores the settings (and a
    holder whose process is gone no longer counts, so a killed simulator's are restored too)."""
    settings().release(name)


def read_sysctls(names: Iterable[str] = KUBELET_SYSCTLS) -> dict[str, str]:
    return {n: (Path("/proc/sys") / n).read_text().strip() for n in names}


def write_sysctls(values: dict[str, str]) -> None:
    for name, value in values.items():
        (Path("/proc/sys") / name).write_text(value)
