"""A simulator with real nodes told to stop (SIGTERM) at each moment of its start: while its pool
writes its journal and claims the bridge, as it prints its banner, while the image seed imports,
and while a real node starts. Each time it exits 0 and leaves the host as before: no journal, no
bridge, no cgroup, nothing else (testkit/hostsnap.py), with no cleanup run."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from testkit.hostsnap import leftovers, snapshot
from testkit.realnodes import alone_with_real_nodes
from testkit.sim import SimulatorProcess, real_node_simulator
from tests.clusters import together_client
from tests.specs import CLUSTER_SPEC
from together_api.wire import ClusterCreateRequest
from together_sim.host import processes, shared
from together_sim.nodes.pool import RECORD_FILE


@pytest.fixture(autouse=True)
def alone() -> Iterator[None]:
    """No other test's simulator with real nodes starts meanwhile: the snapshots compare the
    whole host."""
    with alone_with_real_nodes():
        yield


def _journal_entries(pid: int) -> list[dict[str, object]]:
    entries = []
    for path in shared.JOURNALS.glob(f"pool-{pid}-*.jsonl") if shared.JOURNALS.is_dir() else ():
        for line in path.read_text().splitlines()[1:]:
            try:
                entries.append(json.loads(line))
            except ValueError:  # a line being written
                continue
    return entries


def _pool_begun(pid: int) -> bool:
    """The pool's journal exists: the start has begun changing the host (before the banner)."""
    return shared.JOURNALS.is_dir() and any(shared.JOURNALS.glob(f"pool-{pid}-*.jsonl"))


def _seed_importing(pid: int) -> bool:
    for entry in _journal_entries(pid):
        if str(entry.get("name", "")).startswith("seed-import-"):
            alive = processes.process_started(int(str(entry["pid"]))) == entry["started"]
            if alive and not processes.zombie(int(str(entry["pid"]))):
                return True
    return False


def _node_starting(sim: SimulatorProcess) -> bool:
    """A real node has begun changing the host (a process in its journal), not yet registered."""
    begun = any(
        '"process"' in p.read_text() for p in shared.JOURNALS.glob(f"pool-{sim.pid}-*.node-*")
    )
    status = sim.kubernetes_status()
    nodes = [n for c in status.values() for n in c.get("real_nodes", {}).values()]
    return begun and any(n["state"] == "starting" for n in nodes)


def _until(ready: Callable[[], bool], what: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        assert time.monotonic() < deadline, f"never saw {what}"
        time.sleep(0.01)


def _terminate_when_the_pool_begins(sim: SimulatorProcess) -> threading.Thread:
    """A thread that SIGTERMs the simulator as soon as its pool's journal exists, while
    ``start`` still waits for the banner."""

    def watch() -> None:
        deadline = time.monotonic() + 60
        while (pid := sim.started_pid) is None or not _pool_begun(pid):
            if time.monotonic() > deadline:
                return
            time.sleep(0.002)
        os.kill(pid, signal.SIGTERM)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def _create_cluster(sim: SimulatorProcess) -> None:
    with together_client(sim) as client:
        request = ClusterCreateRequest(
            **{**CLUSTER_SPEC, "cluster_name": "stop", "billing_type": "ON_DEMAND"},
            num_preemptible_gpus=8,
        )
        client.create_cluster(request)


MOMENTS = (
    "while the pool starts",
    "at the banner",
    "while the seed imports",
    "while a node starts",
)


@pytest.mark.parametrize("moment", MOMENTS)
def test_a_sigterm_during_the_start_leaves_the_host_as_before(
    moment: str, tmp_path: Path, kube_bin: Path
) -> None:
    before = snapshot()
    state = tmp_path / "state"
    sim = real_node_simulator(state, kube_bin, 2)
    watcher = _terminate_when_the_pool_begins(sim) if moment == "while the pool starts" else None
    sim.start()
    pid = sim.pid
    try:
        if moment == "while the seed imports":
            _until(lambda: _seed_importing(pid), "an import of the image seed running")
        elif moment == "while a node starts":
            _create_cluster(sim)
            _until(lambda: _node_starting(sim), "a real node starting")
        if watcher is None:
            os.kill(pid, signal.SIGTERM)
        else:
            watcher.join(60)
        code = sim.wait(60)  # one signal only: a second one during the stop is a hard stop
    finally:
        sim.stop()
    assert code == 0, (state / "simulator.log").read_text()[-3000:]
    assert not list(shared.JOURNALS.glob(f"pool-{pid}-*")) if shared.JOURNALS.is_dir() else True
    index = json.loads((state / "kube" / RECORD_FILE).read_text())["network"]
    assert leftovers(before, snapshot(), besides=pid, ours=index, marks=(str(tmp_path),)) == []
