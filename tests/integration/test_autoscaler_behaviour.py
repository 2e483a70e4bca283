"""The autoscaler's behaviours on the simulator's real control plane (``--kubernetes``), without
the engine: the Lease (two replicas never both lead), scarcity (an Event on the pending pods and
no further raise) and a reclaim (its evicted pods wait for Together's refill, no PUT).

Simulated time moves only when a test advances the simulator's clock; the waits are for the
controllers, which run in real time (the controller's windows are seconds here)."""

from __future__ import annotations

import base64
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from lightkube import Client, KubeConfig

from testkit.kube import KubeClient, kube_bin_or_skip
from testkit.sim import SimulatorProcess
from tests.kube_helpers import gpu_job, wait_until
from tests.specs import CLUSTER_SPEC
from together_api.client import TogetherClient
from together_api.values import COMPUTE_CLASS_LABEL
from together_api.wire import ClusterCreateRequest
from together_autoscaler.leader import LeaseElector

KEY = "sk-behaviour-test-77aa"
CLASS = COMPUTE_CLASS_LABEL
REGION, GPU = CLUSTER_SPEC["region"], CLUSTER_SPEC["gpu_type"]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[tuple[SimulatorProcess, str, Path]]:
    """A frozen-clock simulator with one Ready cluster; its admin kubeconfig on disk."""
    with SimulatorProcess(tmp_path / "state", kubernetes=True, kube_bin=kube_bin_or_skip(),
                          time_scale=0, api_key=KEY) as sim:  # fmt: skip
        with TogetherClient(api_key=KEY, base_url=sim.base_url) as together:
            request = ClusterCreateRequest(**CLUSTER_SPEC, cluster_name="b",
                                           billing_type="ON_DEMAND")  # fmt: skip
            cid = together.create_cluster(request).cluster_id
            sim.advance(360)
            sim.control_plane(cid)
            config = tmp_path / "admin.kubeconfig"
            config.write_text(base64.b64decode(together.get_cluster(cid).kube_config).decode())
        yield sim, cid, config


def _elector(config: Path, identity: str, clock: Clock, name: str) -> LeaseElector:
    client = Client(KubeConfig.from_file(config))
    return LeaseElector(client, "default", identity, name=name, lease_seconds=15, clock=clock)


def test_two_replicas_never_both_hold_the_lease(
    cluster: tuple[SimulatorProcess, str, Path],
) -> None:
    _, _, config = cluster
    clock_a, clock_b = Clock(), Clock()
    for round_ in range(5):  # both race for a missing Lease: the API server lets one win
        name = f"race-{round_}"
        a, b = _elector(config, "a", clock_a, name), _elector(config, "b", clock_b, name)
        results = _race(a, b)
        assert sorted(results.values()) == [False, True], results
        holder, other = (a, b) if results["a"] else (b, a)
        other_clock = clock_b if holder is a else clock_a
        assert other.try_acquire_or_renew() is False  # held and fresh
        assert holder.try_acquire_or_renew() is True  # renewed
        other_clock.now += 16  # the holder stops renewing; the other waits out the lease
        assert other.try_acquire_or_renew() is False  # first sight of this renewal
        other_clock.now += 16
        assert other.try_acquire_or_renew() is True
        assert holder.try_acquire_or_renew() is False  # it lost the Lease and knows it
        other.release()
        assert holder.try_acquire_or_renew() is True  # released: taken at once


def _race(a: LeaseElector, b: LeaseElector) -> dict[str, bool]:
    """Both try at the same moment (two threads released by one barrier)."""
    results: dict[str, bool] = {}
    barrier = threading.Barrier(2)

    def attempt(elector: LeaseElector) -> None:
        barrier.wait()
        results[elector.identity] = elector.try_acquire_or_renew()

    threads = [threading.Thread(target=attempt, args=(e,)) for e in (a, b)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def _job(name: str, pods: int) -> dict[str, Any]:
    """Long pods whose evictions (a reclaim) the Job ignores: their replacements wait."""
    ignore_evictions = {"rules": [
        {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]}  # fmt: skip
    return gpu_job(name, run_seconds=36000, pods=pods, node_selector={CLASS: "preemptible"},
                   backoffLimit=0, podReplacementPolicy="Failed",
                   podFailurePolicy=ignore_evictions)  # fmt: skip


def _controller(
    sim: SimulatorProcess, cid: str, config: Path, log: Path, port: int
) -> subprocess.Popen[str]:
    env = {**os.environ, "TOGETHER_API_KEY": KEY, "TOGETHER_BASE_URL": sim.root_url}
    command = [
        sys.executable, "-m", "together_autoscaler", "--cluster-id", cid,
        "--kubeconfig", str(config), "--min-preemptible-gpus", "0",
        "--max-preemptible-gpus", "32", "--scan-interval-seconds", "0.5",
        "--max-node-provision-seconds", "10", "--metrics-port", str(port),
    ]  # fmt: skip
    with log.open("w") as out:
        return subprocess.Popen(command, env=env, stderr=out, text=True)


def _told(admin: KubeClient, prefix: str) -> bool:
    """Whether a pod named ``prefix...`` was told of the scarcity hold."""
    events = admin.events("ScaleUpScarcity", "default")
    return any(e["involvedObject"]["name"].startswith(prefix) for e in events)


def _puts(sim: SimulatorProcess) -> int:
    return sum(1 for r in sim.requests() if r["method"] == "PUT" and "clusters" in r["path"])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _decisions(port: int) -> float:
    """Decisions made so far (one per scan while leading), from the metrics endpoint."""
    try:
        text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=5).text
    except httpx.HTTPError:
        return 0.0
    return sum(float(line.split()[-1]) for line in text.splitlines()
               if line.startswith("together_autoscaler_decisions_total{"))  # fmt: skip


def test_scarcity_is_told_to_the_pods_and_a_reclaim_is_no_new_demand(
    cluster: tuple[SimulatorProcess, str, Path], tmp_path: Path
) -> None:
    sim, cid, config = cluster
    sim.set_capacity(REGION, GPU, preemptible_gpus=16)  # two nodes' worth, for three pods
    admin = KubeClient(config.read_text())
    log = tmp_path / "controller.log"
    port = _free_port()
    controller = _controller(sim, cid, config, log, port)
    try:
        sim.reset_requests()
        admin.request("POST", "/apis/batch/v1/namespaces/default/jobs", _job("burst", 3))
        wait_until(lambda: _puts(sim) == 1, "the scale-up PUT")
        with TogetherClient(api_key=KEY, base_url=sim.base_url) as together:
            assert together.get_cluster(cid).desired_preemptible_gpus == 24
            wait_until(lambda: together.get_cluster(cid).allocated_preemptible_gpus == 16,
                       "the two nodes there are", sim=sim, advance=60)  # fmt: skip
            # Short for over the provisioning timeout (10 s): the waiting pod is told, no raise.
            [event] = wait_until(lambda: admin.events("ScaleUpScarcity", "default"),
                                 "the scarcity Event", timeout=60)  # fmt: skip
            pending = [p["metadata"]["name"] for p in admin.pods("job-name=burst")
                       if not p["spec"].get("nodeName")]  # fmt: skip
            assert event["involvedObject"]["name"] in pending and event["type"] == "Warning"
            assert "allocated 16 of the 24" in event["message"]
            assert "ScaleUpScarcity" in log.read_text() and _puts(sim) == 1
            # Demand beyond the target while held (the waiting pod alone counts as on its way):
            # without the hold this would raise the target to 32.
            admin.request("POST", "/apis/batch/v1/namespaces/default/jobs", _job("more", 1))
            wait_until(lambda: _puts(sim) > 1 or _told(admin, "more-"), "the new pod told")
            assert _puts(sim) == 1
            admin.request("DELETE", "/apis/batch/v1/namespaces/default/jobs/more",
                          {"propagationPolicy": "Background"})  # fmt: skip
            wait_until(lambda: not admin.pods("job-name=more"), "the extra demand gone")

            sim.set_capacity(REGION, GPU, preemptible_gpus=64)
            wait_until(lambda: together.get_cluster(cid).allocated_preemptible_gpus == 24,
                       "the third node", sim=sim, advance=60)  # fmt: skip
            wait_until(lambda: len([p for p in admin.pods("job-name=burst")
                                    if p["status"].get("phase") == "Running"]) == 3,
                       "three pods running")  # fmt: skip
            node = admin.pods("job-name=burst")[0]["spec"]["nodeName"]
            assert sim.reclaim(cid, node_ids=[node]) == [node]
            wait_until(lambda: any(not p["spec"].get("nodeName")
                                   for p in admin.pods("job-name=burst")),
                       "the evicted pod's replacement pending")  # fmt: skip
            seen = _decisions(port)
            wait_until(lambda: _decisions(port) >= seen + 6, "six scans over the pending pod")
            assert _puts(sim) == 1  # the refill is Together's: no PUT
            sim.advance(300)  # the drain window: the node goes, Together refills
            wait_until(lambda: together.get_cluster(cid).allocated_preemptible_gpus == 24,
                       "the refill", sim=sim, advance=60)  # fmt: skip
            wait_until(lambda: len([p for p in admin.pods("job-name=burst")
                                    if p["status"].get("phase") == "Running"]) == 3,
                       "the replacement running")  # fmt: skip
            assert _puts(sim) == 1
    finally:
        controller.send_signal(signal.SIGTERM)
        controller.wait(timeout=10)
        admin.close()
    assert KEY not in log.read_text()
