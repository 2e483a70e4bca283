"""A simulator with real nodes and pods running, killed in each way a user's machine sees (SIGKILL
to it, to its process group, while its nodes start, in the middle of its SIGTERM teardown), or
stopped: one ``python -m together_sim cleanup`` afterwards leaves the host as it was before the
test, compared in full (testkit/hostsnap.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from testkit.hostsnap import bridge_index, leftovers, snapshot
from testkit.kube import KubeClient
from testkit.realnodes import alone_with_real_nodes
from testkit.sim import SimulatorProcess, real_node_simulator
from tests.clusters import together_client
from tests.specs import CLUSTER_SPEC
from together_api.wire import ClusterCreateRequest
from together_sim.host import processes, shared

PYTHON = "localhost/together-python:3.11"
Obj = dict[str, Any]


@pytest.fixture(autouse=True)
def alone() -> Iterator[None]:
    """No other test's simulator with real nodes starts meanwhile (its start would sweep the
    killed one's journal before ``cleanup`` is asked to)."""
    with alone_with_real_nodes():
        yield


def _sim(tmp_path: Path, kube_bin: Path, *, persist: bool = True) -> SimulatorProcess:
    return real_node_simulator(tmp_path / "state", kube_bin, 2, persist=persist, own_session=True)


def _cluster(sim: SimulatorProcess) -> tuple[str, KubeClient]:
    """A cluster with a standard and a preemptible node, both real."""
    with together_client(sim) as client:
        request = ClusterCreateRequest(
            **{**CLUSTER_SPEC, "cluster_name": "crash", "billing_type": "ON_DEMAND"},
            num_preemptible_gpus=8,
        )
        cluster_id = client.create_cluster(request).cluster_id
        sim.control_plane(cluster_id)
        return cluster_id, KubeClient.from_cluster(client.get_cluster(cluster_id))


def _real_ready(kube: KubeClient) -> list[str]:
    return sorted(
        n["metadata"]["name"]
        for n in kube.nodes()
        if n["metadata"]["labels"].get("together-sim/kwok") == "false"
        and any(c["type"] == "Ready" and c["status"] == "True" for c in n["status"]["conditions"])
    )


def _pods_running(kube: KubeClient) -> None:
    """A sleeping pod on each real node, running (its container and shim are what a SIGKILLed
    simulator leaves behind: containerd detaches them)."""
    nodes = kube.wait_for(lambda: _real_ready(kube) if len(_real_ready(kube)) == 2 else None,
                          "two real nodes", 180)  # fmt: skip
    sleep = ["python3", "-c", "import time; time.sleep(3600)"]
    for n, node in enumerate(nodes):
        container = {"name": "main", "image": PYTHON, "command": sleep}
        spec = {"nodeName": node, "restartPolicy": "Never", "terminationGracePeriodSeconds": 30,
                "automountServiceAccountToken": False, "containers": [container]}  # fmt: skip
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"sleeper-{n}"}}
        kube.request("POST", "/api/v1/namespaces/default/pods", {**pod, "spec": spec})

    def running() -> bool:
        pods = kube.pods()
        return len(pods) == 2 and all(p["status"].get("phase") == "Running" for p in pods)

    kube.wait_for(running, "both pods to run", 120)


def _cleanup() -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "together_sim", "cleanup"], capture_output=True, text=True
    )


def _node_journals(pid: int) -> list[Path]:
    return sorted(shared.JOURNALS.glob(f"pool-{pid}-*.node-*.jsonl"))


def _crash(
    tmp_path: Path, kube_bin: Path, kill: Callable[[SimulatorProcess, KubeClient], None]
) -> None:
    """Snapshot, run a simulator until ``kill`` (which kills it), then one cleanup: the host
    must be as before, and cleanup must have had something to remove."""
    before = snapshot()
    sim = _sim(tmp_path, kube_bin)
    with sim:
        pid, index = sim.pid, bridge_index(sim.pid)
        _, kube = _cluster(sim)
        try:
            kill(sim, kube)
        finally:
            kube.close()
        _wait_gone(pid)
    _cleaned_up(before, sim, pid, index, tmp_path)


def _cleaned_up(before: Any, sim: SimulatorProcess, pid: int, index: int, tmp_path: Path) -> None:
    """After the SIGKILL: one cleanup removes the killed run's changes and leaves the host as it
    was ``before``; a second one finds nothing left."""
    assert sim.returncode == -signal.SIGKILL
    done = _cleanup()
    assert done.returncode == 0, done.stdout + done.stderr
    assert "removed " in done.stdout, done.stdout  # the killed run's journal, undone
    assert leftovers(before, snapshot(), besides=pid, ours=index, marks=(str(tmp_path),)) == []
    again = _cleanup()  # nothing of the killed run is left to remove
    assert again.returncode == 0 and "nothing to remove" in again.stdout, again.stdout


def _wait_gone(pid: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while processes.process_started(pid) is not None and not processes.zombie(pid):
        assert time.monotonic() < deadline, f"simulator {pid} still runs"
        time.sleep(0.05)


def test_sigkill_to_the_simulator_with_pods_running(tmp_path: Path, kube_bin: Path) -> None:
    def kill(sim: SimulatorProcess, kube: KubeClient) -> None:
        _pods_running(kube)
        os.kill(sim.pid, signal.SIGKILL)

    _crash(tmp_path, kube_bin, kill)


def test_sigkill_to_the_simulators_process_group(tmp_path: Path, kube_bin: Path) -> None:
    def kill(sim: SimulatorProcess, kube: KubeClient) -> None:
        _pods_running(kube)
        os.killpg(os.getpgid(sim.pid), signal.SIGKILL)

    _crash(tmp_path, kube_bin, kill)


def test_sigkill_while_nodes_start(tmp_path: Path, kube_bin: Path) -> None:
    def kill(sim: SimulatorProcess, kube: KubeClient) -> None:
        def starting() -> bool:  # a node has begun changing the host, not yet registered
            status = sim.kubernetes_status()
            nodes = [n for c in status.values() for n in c.get("real_nodes", {}).values()]
            begun = any('"process"' in p.read_text() for p in _node_journals(sim.pid))
            return begun and any(n["state"] == "starting" for n in nodes)

        kube.wait_for(starting, "a real node to be starting", 120)
        os.kill(sim.pid, signal.SIGKILL)

    _crash(tmp_path, kube_bin, kill)


def test_sigkill_while_the_image_seed_imports(tmp_path: Path, kube_bin: Path) -> None:
    """The image seed is made as the simulator starts (its own containerd, the archives'
    imports, a half-unpacked root): killed then, all of it is the cleanup's to remove."""
    before = snapshot()
    sim = _sim(tmp_path, kube_bin)
    with sim:
        pid, index = sim.pid, bridge_index(sim.pid)

        def importing() -> bool:  # an import of the seed runs (pid and start time)
            for journal in shared.JOURNALS.glob(f"pool-{pid}-*.jsonl"):
                for line in journal.read_text().splitlines():
                    try:
                        entry = json.loads(line)
                    except ValueError:  # a line being written
                        continue
                    if str(entry.get("name", "")).startswith("seed-import-"):
                        alive = processes.process_started(entry["pid"]) == entry["started"]
                        if alive and not processes.zombie(entry["pid"]):
                            return True
            return False

        deadline = time.monotonic() + 60
        while not importing():
            assert time.monotonic() < deadline, "no import of the image seed was seen running"
            time.sleep(0.02)
        os.kill(sim.pid, signal.SIGKILL)
        _wait_gone(pid)
    _cleaned_up(before, sim, pid, index, tmp_path)


def test_sigkill_in_the_middle_of_the_sigterm_teardown(tmp_path: Path, kube_bin: Path) -> None:
    def kill(sim: SimulatorProcess, kube: KubeClient) -> None:
        _pods_running(kube)
        status = sim.kubernetes_status()
        kubelets = [n["pids"]["kubelet"] for c in status.values() for n in c["real_nodes"].values()]
        os.kill(sim.pid, signal.SIGTERM)
        # The teardown has begun once a kubelet is gone: SIGKILL then, mid-way.
        kube.wait_for(
            lambda: any(
                processes.process_started(p) is None or processes.zombie(p) for p in kubelets
            ),
            "the teardown to reach a node",
            60,
        )
        os.kill(sim.pid, signal.SIGKILL)

    _crash(tmp_path, kube_bin, kill)


def test_a_plain_stop_leaves_the_host_as_before_without_cleanup(
    tmp_path: Path, kube_bin: Path
) -> None:
    before = snapshot()
    sim = _sim(tmp_path, kube_bin, persist=False)  # a temporary root: in the journal too
    with sim:
        pid, index = sim.pid, bridge_index(sim.pid)
        _, kube = _cluster(sim)
        try:
            _pods_running(kube)
        finally:
            kube.close()
    assert sim.returncode == 0, (tmp_path / "state" / "simulator.log").read_text()[-3000:]
    assert leftovers(before, snapshot(), besides=pid, ours=index, marks=(str(tmp_path),)) == []
    assert not list(shared.JOURNALS.glob(f"pool-{pid}-*")) if shared.JOURNALS.is_dir() else True
