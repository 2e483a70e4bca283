"""The kube hub's shutdown and wake-ups, and the mirror's, with stand-ins for the mirrors and
control planes (no control plane runs)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any, ClassVar, cast

import httpx
import pytest

from tests.sim_app import Sim
from together_sim.kube.hub import KUBE_BIN_ENV, KubeHub, find_kube_bin
from together_sim.kube.mirror import ClusterMirror
from together_sim.kube.processes import BINARIES
from together_sim.nodes.provider import NodeProvider
from together_sim.nodes.real import JoinedPlane
from together_sim.plane.pki import ClusterPki
from together_sim.plane.views import ClusterView, NodeView


class _Plane:
    """A control plane that starts at once and answers nothing (the mirror's pass is a test's)."""

    def __init__(self) -> None:
        self.terminated = 0
        self.cancelled = threading.Event()
        self.start_seconds = 0.0
        self.server = "https://127.0.0.1:1"
        self.root = Path("/nonexistent")

    def start(self) -> None:
        pass

    @contextmanager
    def http_client(self) -> Iterator[httpx.Client]:
        with httpx.Client() as client:
            yield client

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


LONG: float = 60.0
"""A tick no test waits for: a pass within a test's few seconds came from a wake-up."""
SOON: float = 5.0


def _hub(
    sim: Sim, tmp_path: Path, passes: list[threading.Event], fail: BaseException | None = None
) -> KubeHub:
    """A started hub on the test's runtime, ticking every minute, whose passes set ``passes`` in
    turn (the first raises ``fail``, when given) after the real pass."""
    runtime = sim.app.state.runtime
    hub = KubeHub(partial(runtime.transaction, wake=False), tmp_path / "bin", tmp_path / "kube",
                  poll_seconds=LONG)  # fmt: skip
    real, done = hub._pass, iter(passes)

    def counted() -> None:
        real()
        next(done).set()
        if fail is not None and passes[0].is_set() and not passes[1].is_set():
            raise fail

    hub._pass = counted  # type: ignore[method-assign]
    runtime.kube = hub.start()
    return hub


@pytest.mark.parametrize("fail", [None, RuntimeError("a pass failed"), SystemExit(1)])
def test_a_request_wakes_the_hub_and_a_failed_pass_does_not_end_it(
    sim: Sim, tmp_path: Path, fail: BaseException | None
) -> None:
    """A reclaim reaches its mirror a tick sooner when the request wakes the hub, its own
    passes do not wake it (else it would pass again at once, forever), and a pass that raises,
    even SystemExit (which ends a thread silently), leaves the thread to pass again."""
    passes = [threading.Event() for _ in range(3)]
    hub = _hub(sim, tmp_path, passes, fail)
    try:
        assert not passes[0].wait(0.3)  # started: no pass before a request, or the tick
        sim.http.get("/v1/compute/clusters")
        assert passes[0].wait(SOON)
        assert not passes[1].wait(0.5)  # the pass's own transaction woke nothing
        sim.advance(1)
        assert passes[1].wait(SOON) and hub._thread.is_alive()
    finally:
        sim.app.state.runtime.kube = None
        hub.close(timeout=SOON)
    assert not hub._thread.is_alive()


def test_a_poke_before_start_passes_at_once_and_close_stops_a_waiting_hub(
    sim: Sim, tmp_path: Path
) -> None:
    """No ordering loses the thread: a poke before start is the first pass, close ends the
    wait at once (not after the tick), and a poke after close does nothing."""
    runtime = sim.app.state.runtime
    hub = KubeHub(partial(runtime.transaction, wake=False), tmp_path / "bin", tmp_path / "kube",
                  poll_seconds=LONG)  # fmt: skip
    passed = threading.Event()
    real = hub._pass

    def counted() -> None:
        real()
        passed.set()

    hub._pass = counted  # type: ignore[method-assign]
    hub.poke()
    hub.start()
    assert passed.wait(SOON)
    hub.close(timeout=SOON)
    hub._thread.join(SOON)
    assert not hub._thread.is_alive()
    hub.poke()


def _view(now: float, draining_since: float | None = None, ready: bool = True) -> ClusterView:
    node = NodeView("gpu-preemptible-dp-a-b", True, ready, False, draining_since, "", "")
    return ClusterView("c1", "train", "H100_SXM", now, True, False, True, (node,), ())


def _nodes() -> NodeProvider:
    return NodeProvider("c1", JoinedPlane(Path("/nowhere"), 6443, ClusterPki(Path("/nowhere"))))


@pytest.mark.parametrize(
    ("offered", "wakes"),
    [
        (_view(100.0), False),  # the same view again
        (_view(101.0), False),  # the clock alone: the next tick is soon enough
        (_view(101.0, draining_since=100.5), True),  # a reclaim began
        (_view(100.0, ready=False), True),
        (ClusterView("c1", "train", "H100_SXM", 100.0, True, True, True, _view(0).nodes, ()), True),
    ],
)
def test_a_changed_cluster_wakes_its_mirror_and_the_clock_alone_does_not(
    offered: ClusterView, wakes: bool
) -> None:
    mirror = ClusterMirror(cast(Any, _Plane()), _view(100.0), _nodes())  # its thread never starts
    mirror._wake.clear()  # what the first pass did
    mirror.offer(offered)
    assert mirror._wake.is_set() is wakes


def test_an_offered_change_passes_the_mirror_at_once_and_a_failed_pass_does_not_end_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The mirror's tick is a minute here: each pass within seconds was woken by an offer."""
    monkeypatch.setattr("together_sim.kube.mirror.PASS_SECONDS", LONG)
    mirror = ClusterMirror(cast(Any, _Plane()), _view(100.0), _nodes())
    seen: list[ClusterView] = []
    passed = threading.Semaphore(0)

    def mirror_pass(api: object, pods: object, view: ClusterView) -> None:
        seen.append(view)
        passed.release()
        if len(seen) == 2:
            raise RuntimeError("a pass failed")

    monkeypatch.setattr(mirror, "_mirror", mirror_pass)
    mirror.start()
    try:
        assert passed.acquire(timeout=SOON)  # the first pass, once the control plane is up
        mirror.offer(_view(101.0))
        assert not passed.acquire(timeout=0.3)
        for n in (1, 2):
            mirror.offer(_view(101.0, draining_since=100.0 + n))
            assert passed.acquire(timeout=SOON)
        assert [v.nodes[0].draining_since for v in seen] == [None, 101.0, 102.0]
        assert mirror._thread.is_alive() and mirror._passes == 2
    finally:
        mirror.stop()
        mirror.join(SOON)
    assert not mirror._thread.is_alive()


def test_the_runtimes_hub_is_not_woken_by_its_own_passes(
    sim: Sim, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hub the runtime starts takes a transaction that does not poke it: else each pass
    would wake the next at once, a busy loop holding the world's lock."""
    for binary in BINARIES:
        (tmp_path / binary).touch()
    monkeypatch.setenv(KUBE_BIN_ENV, str(tmp_path))
    runtime = sim.app.state.runtime
    runtime.start_kubernetes()
    hub = runtime.kube
    passes = 0
    real = hub._pass

    def counted() -> None:
        nonlocal passes
        passes += 1
        real()

    hub._pass = counted
    try:
        sim.http.get("/v1/compute/clusters")
        threading.Event().wait(1.0)
        assert 1 <= passes <= 10  # the request's pass and the ticks, five a second
    finally:
        runtime.close()


class _StartsOnce:
    """A mirror whose thread cannot start the first time (say, no thread left to the process)."""

    failed: ClassVar[set[str]] = set()

    def __init__(self, plane: Any, view: ClusterView, *_: Any) -> None:
        self.cluster_id = view.cluster_id
        self.offered: list[ClusterView] = []

    def start(self) -> _StartsOnce:
        if self.cluster_id not in self.failed:
            self.failed.add(self.cluster_id)
            raise RuntimeError("can't start new thread")
        return self

    def offer(self, view: ClusterView) -> None:
        self.offered.append(view)

    def take_demand(self) -> None:
        return None


def test_a_mirror_that_could_not_start_is_made_again_and_the_other_clusters_are_served(
    sim: Sim, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cluster whose mirror failed is not kept with a mirror that never passes (its cluster
    never Ready, a client waiting forever), nor does it keep the next cluster from its own."""
    monkeypatch.setattr("together_sim.kube.hub.ClusterMirror", _StartsOnce)
    monkeypatch.setattr(_StartsOnce, "failed", set())
    first, second = sim.create().cluster_id, sim.create(cluster_name="eval").cluster_id
    sim.advance(120)  # both data planes up
    runtime = sim.app.state.runtime
    hub = KubeHub(partial(runtime.transaction, wake=False), tmp_path / "bin", tmp_path / "kube")
    _StartsOnce.failed.add(second)  # only the first cluster's mirror fails, once
    hub._pass()
    assert list(hub._mirrors) == [second]
    hub._pass()
    assert set(hub._mirrors) == {first, second}
    assert [len(cast(_StartsOnce, hub._mirrors[c]).offered) for c in (first, second)] == [1, 2]


def test_a_control_plane_step_fails_after_the_hubs_start_timeout_naming_the_option(
    sim: Sim, tmp_path: Path
) -> None:
    """``--control-plane-timeout`` reaches each control plane the hub makes: an etcd that never
    answers fails its cluster's start after that many seconds, not after the default 90, and
    the error names the option a slow host needs."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    etcd = bin_dir / "etcd"
    etcd.write_text("#!/bin/sh\nexec sleep 60\n")  # runs, never listens
    etcd.chmod(0o755)
    runtime = sim.app.state.runtime
    hub = KubeHub(partial(runtime.transaction, wake=False), bin_dir, tmp_path / "kube",
                  start_timeout=0.5)  # fmt: skip
    hub.prepare("c-slow", "slow")
    plane = hub._planes["c-slow"]
    try:
        with pytest.raises(RuntimeError) as failed:
            plane.start()
    finally:
        plane.stop(timeout=5.0)
    assert str(failed.value) == (
        "etcd of cluster c-slow not ready after 0.5 s; a slow host (a VM without KVM) needs a "
        "longer --control-plane-timeout"
    )
