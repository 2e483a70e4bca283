"""The three kernel settings the kubelet rewrites (they are not per namespace): held by every
simulator with real nodes, restored by the last holder out, a killed holder no longer counting."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Final

from together_sim.host import shared
from together_sim.host.processes import process_started

__all__ = [
    "KUBELET_SYSCTLS",
    "SHARED_SETTINGS",
    "hold_sysctls",
    "holder",
    "holder_alive",
    "read_sysctls",
    "release_sysctls",
    "write_sysctls",
]

KUBELET_SYSCTLS: Final = ("vm/overcommit_memory", "kernel/panic", "kernel/panic_on_oops")
"""What the kubelet rewrites at start (its ``protectKernelDefaults: false``): 0 -> 1, 1 -> 10 and
0 -> 1 on a Debian host. They are not per namespace, so the host keeps them until restored."""
SHARED_SETTINGS: Final = shared.RUN_DIR / "sysctls.json"
"""The kernel settings as they were before any simulator's first real node, and who holds real
nodes now: several simulators on one machine share the settings, so the last one restores them."""


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
    with shared.host_lock():
        data: dict[str, Any] = (
            json.loads(SHARED_SETTINGS.read_text())
            if SHARED_SETTINGS.exists()
            else {"original": read_sysctls(), "holders": []}
        )
        change(data)
        data["holders"] = sorted({h for h in data["holders"] if holder_alive(h)})
        if data["holders"]:
            shared.save_json(SHARED_SETTINGS, data)
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
