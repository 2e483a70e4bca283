"""A simulator with real nodes told to stop (SIGTERM) at each moment of its start: while its pool
waits for the machine's lock to write its journal and claim the bridge, as it prints its banner,
while the image seed imports, and while a real node starts. Each time it exits 0 and leaves the
host as before: no journal, no bridge, no cgroup, nothing else (testkit/hostsnap.py), with no
cleanup run.

Each moment is held, not raced: the test holds the machine's lock the pool waits for, or stops
(SIGSTOP) the image import the start waits for, and signals only once the simulator is seen
waiting there; the simulator's stop kills the stopped import (SIGKILL ends a stopped process)."""

from __future__ import annotations

import contextlib
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


def _waits_for_the_host_lock(pid: int) -> bool:
    """Process ``pid`` is blocked on the machine's lock (`/proc/locks`: a ``->`` line)."""
    with contextlib.suppress(FileNotFoundError):
        inode = os.stat(shared.LOCK).st_ino
        for line in Path("/proc/locks").read_text().splitlines():
            fields = line.split()
            if "->" in fields:
                at = fields.index("->")
                if fields[at + 4] == str(pid) and fields[at + 5].endswith(f":{inode}"):
                    return True
    return False


def _terminate_while_the_pool_waits(
    sim: SimulatorProcess,
) -> tuple[threading.Thread, threading.Event]:
    """A thread that holds the machine's lock (the event is set once it does), SIGTERMs the
    simulator once its pool's start is seen waiting for that lock, and then lets it go."""
    held = threading.Event()

    def hold() -> None:
        with shared.host_lock():
            held.set()
            deadline = time.monotonic() + 60
            while (pid := sim.started_pid) is None or not _waits_for_the_host_lock(pid):
                if time.monotonic() > deadline:
                    return
                time.sleep(0.005)
            os.kill(pid, signal.SIGTERM)

    thread = threading.Thread(target=hold, daemon=True)
    thread.start()
    return thread, held


def _stopped(pid: int, started: object) -> bool:
    """Process ``pid`` (started at ``started``) is stopped (state ``T``), not ended."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state in ("T", "t") and processes.process_started(pid) == started


def _hold_the_seed_import(pid: int, held: list[int]) -> bool:
    """Stop (SIGSTOP) the first import of the image seed still running, and say whether one is
    now held: the seed cannot be ready, so the start waits for it until the stop kills it."""
    for entry in _journal_entries(pid):
        if not str(entry.get("name", "")).startswith("seed-import-"):
            continue
        child, started = int(str(entry["pid"])), entry["started"]
        if processes.process_started(child) != started or processes.zombie(child):
            continue  # this archive is imported already: another may still run
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signal.SIGSTOP)
            held.append(child)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            if _stopped(child, started):
                return True
            if processes.zombie(child):
                break
            time.sleep(0.005)
    return False


def _node_waits_for_the_seed(sim: SimulatorProcess) -> bool:
    """A real node has begun changing the host (its cgroup is in its journal) and still starts:
    with the seed held, its start waits at its images."""
    begun = any(
        '"cgroup"' in p.read_text() for p in shared.JOURNALS.glob(f"pool-{sim.pid}-*.node-*")
    )
    status = sim.kubernetes_status()
    nodes = [n for c in status.values() for n in c.get("real_nodes", {}).values()]
    return begun and any(n["state"] == "starting" for n in nodes)


def _until(ready: Callable[[], bool], what: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        assert time.monotonic() < deadline, f"never saw {what}"
        time.sleep(0.01)


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
    watcher = None
    if moment == "while the pool starts":
        watcher, lock_held = _terminate_while_the_pool_waits(sim)
        assert lock_held.wait(10), "the test never held the machine's lock"
    held: list[int] = []
    try:
        sim.start()  # with the lock held, its banner comes once the watcher let the lock go
        pid = sim.pid
        if moment in ("while the seed imports", "while a node starts"):
            _until(lambda: _hold_the_seed_import(pid, held), "an import of the image seed to hold")
        if moment == "while a node starts":
            _create_cluster(sim)
            _until(lambda: _node_waits_for_the_seed(sim), "a real node waiting for the seed")
        if watcher is None:
            os.kill(pid, signal.SIGTERM)
        else:
            watcher.join(60)
        code = sim.wait(60)  # one signal only: a second one during the stop is a hard stop
    finally:
        for child in held:  # the stop killed it; if not, it must not stay stopped
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, signal.SIGCONT)
        sim.stop()
    assert code == 0, (state / "simulator.log").read_text()[-3000:]
    assert not list(shared.JOURNALS.glob(f"pool-{pid}-*")) if shared.JOURNALS.is_dir() else True
    index = json.loads((state / "kube" / RECORD_FILE).read_text())["network"]
    assert leftovers(before, snapshot(), besides=pid, ours=index, marks=(str(tmp_path),)) == []
