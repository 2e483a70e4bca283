"""The kube hub's shutdown, with stand-ins for the mirrors (no control plane runs)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, cast

import pytest

from tests.sim_app import Sim
from together_sim.kube.hub import KUBE_BIN_ENV, KubeHub, find_kube_bin
from together_sim.kube.mirror import ClusterMirror
from together_sim.kube.processes import BINARIES
from together_sim.kube.views import ClusterView, NodeView


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


def test_a_requests_change_wakes_the_hub_and_the_hubs_own_pass_does_not(
    sim: Sim, tmp_path: Path
) -> None:
    """Why: a reclaim reaches the kubelet one hub pass sooner when the request wakes the hub;
    the hub's own transaction must not, or it would pass again at once, forever."""
    runtime = sim.app.state.runtime
    hub = KubeHub(runtime.transaction, tmp_path / "bin", tmp_path / "kube")  # not started
    runtime.kube = hub
    try:
        with runtime.transaction():
            pass
        assert hub._wake.is_set()
        hub._wake.clear()
        own = threading.Thread(target=hub.poke)
        hub._thread = own
        own.start()
        own.join()
        assert not hub._wake.is_set()
    finally:
        runtime.kube = None


def _view(now: float, draining_since: float | None = None) -> ClusterView:
    node = NodeView("gpu-preemptible-dp-a-b", True, True, False, draining_since, "", "")
    return ClusterView("c1", "train", "H100_SXM", now, True, False, True, (node,), ())


def test_a_changed_cluster_wakes_its_mirror_and_the_clock_alone_does_not() -> None:
    mirror = ClusterMirror(cast(Any, _Plane()), _view(100.0))  # its thread never starts
    mirror.offer(_view(101.0))
    assert not mirror._wake.is_set()  # the next tick is soon enough for the clock
    mirror.offer(_view(102.0, draining_since=101.5))  # a reclaim began
    assert mirror._wake.is_set()


def test_the_image_seed_and_the_volumes_are_never_taken_for_a_gone_clusters_files(
    sim: Sim, tmp_path: Path
) -> None:
    """Why: the real nodes' images are being unpacked beside the clusters' directories while
    the hub removes those of gone clusters; removing the seed would leave nodes without images."""
    root = tmp_path / "kube"
    for name in ("image-seed", "volumes", "gone-cluster"):
        (root / name).mkdir(parents=True)
    KubeHub(sim.app.state.runtime.transaction, tmp_path / "bin", root)._remove_orphans()
    assert sorted(p.name for p in root.iterdir()) == ["image-seed", "volumes"]
