"""A host setting every simulator on the machine shares, held in a record under
``/run/together-sim``: the first holder keeps it as it was, the last one out puts it back."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from together_sim.host import shared
from together_sim.host.processes import process_started, runs, zombie

__all__ = ["HeldSetting", "holder", "holder_alive"]

T = TypeVar("T")


def holder(pid: int, what: object) -> str:
    """A holder of a shared setting: ``<pid>@<start time>:<what>``."""
    return f"{pid}@{process_started(pid)}:{what}"


def holder_alive(name: str) -> bool:
    """Whether the process that holds as ``name`` still runs: the same pid *and* start time (a
    pid reused by a later process does not hold). A holder written without its start time (by
    an older simulator) counts while its pid runs."""
    pid, _, started = name.split(":", 1)[0].partition("@")
    try:
        if started:
            return runs(int(pid), int(started))
        return not zombie(int(pid))  # written by an older simulator: its pid is all there is
    except ValueError:
        return False


@dataclass(frozen=True)
class HeldSetting(Generic[T]):
    """The record at ``path``: ``{"original": read(), "holders": [...]}``, changed only under
    the machine-wide lock; ``restore(original)`` puts the setting back once nobody holds it,
    a holder whose process is gone (a simulator killed with SIGKILL) no longer counting.

    Why one record for all: several simulators may run real nodes at once, and each changes
    what it cannot change alone (the kernel settings the kubelet rewrites; the controllers runc
    and the pool enable above the nodes' systemd scopes). Had each put back what it found, the
    second to start would keep the first one's change for good: it found it changed."""

    path: Path
    read: Callable[[], T]
    restore: Callable[[T], None]

    def _update(self, change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
        with shared.host_lock():
            data: dict[str, Any] = (
                json.loads(self.path.read_text())
                if self.path.exists()
                else {"original": self.read(), "holders": []}
            )
            change(data)
            data["holders"] = sorted({h for h in data["holders"] if holder_alive(h)})
            if data["holders"]:
                shared.save_json(self.path, data)
            else:
                self.restore(data["original"])
                self.path.unlink(missing_ok=True)
            return data

    def hold(self, name: str) -> T:
        """``name`` (:func:`holder`) is about to change the setting: it is kept as it is now,
        unless another holder kept it first. Returns it as it was before any holder."""
        original: T = self._update(lambda data: data["holders"].append(name))["original"]
        return original

    def release(self, name: str) -> None:
        """``name`` no longer holds it: the last holder out restores it (and a holder whose
        process is gone no longer counts, so a killed simulator's change is undone too)."""
        if not self.path.exists():
            return  # nobody holds it: nothing to restore
        self._update(lambda data: data.update(holders=[h for h in data["holders"] if h != name]))

    def holders(self) -> list[str]:
        """Who holds it now, as recorded ([] when nobody does)."""
        if not self.path.exists():
            return []
        held: list[str] = json.loads(self.path.read_text())["holders"]
        return held
