"""The kube hub's shutdown, with stand-ins for the mirrors (no control plane runs)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.sim_app import Sim
from together_sim.kube.hub import KUBE_BIN_ENV, KubeHub, find_kube_bin
from together_sim.kube.processes import BINARIES


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


def test_the_binaries_are_where_the_setting_says_and_nowhere_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An installed simulator knows no checkout: without --kube-bin or $TOGETHER_KUBE_BIN it
    names the fix rather than look for tools/kube's cache (even where that cache is built)."""
    monkeypatch.delenv(KUBE_BIN_ENV, raising=False)
    with pytest.raises(SystemExit, match=r"neither --kube-bin nor \$TOGETHER_KUBE_BIN is set"):
        find_kube_bin()
    for binary in BINARIES:
        (tmp_path / binary).touch()
    assert find_kube_bin(tmp_path) == tmp_path
    monkeypatch.setenv(KUBE_BIN_ENV, str(tmp_path))
    assert find_kube_bin() == tmp_path
    with pytest.raises(SystemExit, match="no kwok in"):
        (tmp_path / "kwok").unlink()
        find_kube_bin()
