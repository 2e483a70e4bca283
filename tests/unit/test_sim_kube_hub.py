"""The kube hub's shutdown, with stand-ins for the mirrors (no control plane runs)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.sim_app import Sim
from together_sim.kube.hub import KubeHub


class _Plane:
    def __init__(self) -> None:
        self.terminated = 0

    def terminate(self) -> None:
        self.terminated += 1

    def stop(self, timeout: float = 0.0) -> None:
        pass


class _Mirror:
    def __init__(self) -> None:
        self.plane = _Plane()
        self.stopped = 0

    def stop(self, *, remove: bool = False) -> None:
        self.stopped += 1

    def join(self, timeout: float = 0.0) -> None:
        pass

    def take_demand(self) -> None:
        return None


def test_close_signals_each_control_plane_once(sim: Sim, tmp_path: Path) -> None:
    hub = KubeHub(sim.app.state.runtime.transaction, tmp_path / "bin", tmp_path / "kube").start()
    mirrors: dict[str, Any] = {"a": _Mirror(), "b": _Mirror()}
    with hub._lock:
        hub._mirrors.update(mirrors)
    hub.close(timeout=2.0)
    assert [(m.stopped, m.plane.terminated) for m in mirrors.values()] == [(1, 1), (1, 1)]
