"""The autoscaler's behaviours on the simulator's real control plane (``--kubernetes``), without
the engine: the Lease (two replicas never both lead), scarcity (an Event on the pending pods and
no further raise) and a reclaim (its evicted pods wait for Together's refill, no PUT).

Simulated time moves only when a test advances the simulator's clock; the waits are for the
controllers, which run in real time (the controller's windows are seconds here)."""

from __future__ import annotations

import threading
from pathlib import Path

from lightkube import Client, KubeConfig

from testkit.kube import KubeClient
from testkit.wait import wait_for
from tests.integration.conftest import SIM_KEY, ReadyCluster
from tests.kube_helpers import (
    AutoscalerProcess,
    cluster_puts,
    gpu_job,
    started_pods,
    surviving_job,
)
from tests.specs import CLUSTER_SPEC
from together_api.wire import Cluster
from together_autoscaler.leader import LeaseElector
from together_facts.values import COMPUTE_CLASS_LABEL

CLASS = COMPUTE_CLASS_LABEL
JOBS = "/apis/batch/v1/namespaces/default/jobs"
REGION, GPU = CLUSTER_SPEC["region"], CLUSTER_SPEC["gpu_type"]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _elector(config: Path, identity: str, clock: Clock, name: str) -> LeaseElector:
    client = Client(KubeConfig.from_file(config))
    return LeaseElector(client, "default", identity, name=name, lease_seconds=15, clock=clock)


def test_two_replicas_never_both_hold_the_lease(ready_cluster: ReadyCluster) -> None:
    config = ready_cluster.kubeconfig
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


def _told(admin: KubeClient, prefix: str) -> bool:
    """Whether a pod named ``prefix...`` was told of the scarcity hold."""
    events = admin.events("ScaleUpScarcity", "default")
    return any(e["involvedObject"]["name"].startswith(prefix) for e in events)


def test_scarcity_is_told_to_the_pods_and_a_reclaim_is_no_new_demand(
    ready_cluster: ReadyCluster, tmp_path: Path
) -> None:
    sim, cid, config = ready_cluster.sim, ready_cluster.cluster_id, ready_cluster.kubeconfig
    sim.set_capacity(REGION, GPU, preemptible_gpus=16)  # two nodes' worth, for three pods
    admin = KubeClient(config.read_text())
    log = tmp_path / "controller.log"
    controller = AutoscalerProcess(sim, SIM_KEY, cid, config, log,
                                   **{"--max-node-provision-seconds": 10})  # fmt: skip

    def puts() -> int:
        return len(cluster_puts(sim))

    try:
        sim.reset_requests()
        admin.request("POST", JOBS, surviving_job("burst", 3))
        wait_for(lambda: puts() == 1, "the scale-up PUT")
        with ready_cluster.together() as together:
            assert together.get_cluster(cid).desired_preemptible_gpus == 24
            wait_for(lambda: together.get_cluster(cid).allocated_preemptible_gpus == 16,
                       "the two nodes there are", each=lambda: sim.advance(60))  # fmt: skip
            # Short for over the provisioning timeout (10 s): the waiting pod is told, no raise.
            [event] = wait_for(lambda: admin.events("ScaleUpScarcity", "default"),
                                 "the scarcity Event", timeout=60)  # fmt: skip
            pending = [p["metadata"]["name"] for p in admin.pods("job-name=burst")
                       if not p["spec"].get("nodeName")]  # fmt: skip
            assert event["involvedObject"]["name"] in pending and event["type"] == "Warning"
            assert "allocated 16 of the 24" in event["message"]
            assert "ScaleUpScarcity" in log.read_text() and puts() == 1
            # Demand beyond the target while held (the waiting pod alone counts as on its way):
            # without the hold this would raise the target to 32.
            admin.request("POST", JOBS, surviving_job("more", 1))
            wait_for(lambda: puts() > 1 or _told(admin, "more-"), "the new pod told")
            assert puts() == 1
            admin.request("DELETE", "/apis/batch/v1/namespaces/default/jobs/more",
                          {"propagationPolicy": "Background"})  # fmt: skip
            wait_for(lambda: not admin.pods("job-name=more"), "the extra demand gone")

            sim.set_capacity(REGION, GPU, preemptible_gpus=64)
            wait_for(lambda: together.get_cluster(cid).allocated_preemptible_gpus == 24,
                       "the third node", each=lambda: sim.advance(60))  # fmt: skip
            wait_for(lambda: len([p for p in admin.pods("job-name=burst")
                                    if p["status"].get("phase") == "Running"]) == 3,
                       "three pods running")  # fmt: skip
            node = admin.pods("job-name=burst")[0]["spec"]["nodeName"]
            assert sim.reclaim(cid, node_ids=[node]) == [node]
            wait_for(lambda: any(not p["spec"].get("nodeName")
                                   for p in admin.pods("job-name=burst")),
                       "the evicted pod's replacement pending")  # fmt: skip
            controller.scanned(6)  # six scans over the pending pod
            assert puts() == 1  # the refill is Together's: no PUT
            sim.advance(300)  # the drain window: the node goes, Together refills
            wait_for(lambda: together.get_cluster(cid).allocated_preemptible_gpus == 24,
                       "the refill", each=lambda: sim.advance(60))  # fmt: skip
            wait_for(lambda: len([p for p in admin.pods("job-name=burst")
                                    if p["status"].get("phase") == "Running"]) == 3,
                       "the replacement running")  # fmt: skip
            assert puts() == 1
    finally:
        controller.stop()
        admin.close()
    assert SIM_KEY not in log.read_text()


def test_no_scale_down_while_a_reclaim_drains_so_the_marked_node_is_not_stranded(
    ready_cluster: ReadyCluster, tmp_path: Path
) -> None:
    """Two idle nodes, one of them reclaimed: lowering the target during the drain would only
    cancel Together's refill (it counts undrained nodes) and leave the other node cordoned and
    marked for good, the target stuck above the floor. Held, both go after the drain."""
    sim, cid, config = ready_cluster.sim, ready_cluster.cluster_id, ready_cluster.kubeconfig
    admin = KubeClient(config.read_text())
    log = tmp_path / "controller.log"
    controller = AutoscalerProcess(sim, SIM_KEY, cid, config, log,
                                   **{"--scale-down-unneeded-seconds": 4})  # fmt: skip
    preemptible = {CLASS: "preemptible"}
    try:
        with ready_cluster.together() as together:
            admin.request("POST", JOBS, surviving_job("long", 1))
            admin.request("POST", JOBS, gpu_job("short", run_seconds=3600, pods=2,
                                                node_selector=preemptible))  # fmt: skip
            wait_for(lambda: together.get_cluster(cid).desired_preemptible_gpus == 24,
                       "the raise to 24")  # fmt: skip
            wait_for(lambda: len(started_pods(admin)) == 3, "three pods started",
                       each=lambda: sim.advance(30))  # fmt: skip
            short_nodes = [p["spec"]["nodeName"] for p in admin.pods("job-name=short")]
            sim.advance(3600)  # the short pods' work is done: their two nodes fall idle
            assert sim.reclaim(cid, node_ids=short_nodes[:1]) == short_nodes[:1]
            wait_for(lambda: admin.job("short")["status"].get("succeeded") == 2, "short done")
            controller.scanned(16)  # 8 s of scans: past the 4 s unneeded window
            assert together.get_cluster(cid).desired_preemptible_gpus == 24
            assert "ScaleDownReclaim" in log.read_text()
            # The drain ends, Together refills to 24, then the idle nodes go: back to 8.
            sim.advance(300)
            wait_for(lambda: _at(together.get_cluster(cid), 8), "the target back at 8",
                       each=lambda: sim.advance(30))  # fmt: skip
            wait_for(lambda: not [n for n in admin.nodes() if n["spec"].get("unschedulable")],
                       "no node left cordoned", each=lambda: sim.advance(30))  # fmt: skip
            assert [p["status"]["phase"] for p in admin.pods("job-name=long")] == ["Running"]
    finally:
        controller.stop()
        admin.close()


def _at(cluster: Cluster, gpus: int) -> bool:
    return cluster.desired_preemptible_gpus == cluster.allocated_preemptible_gpus == gpus
