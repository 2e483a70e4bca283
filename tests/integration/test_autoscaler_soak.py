"""A soak of the autoscaler on the simulator's real control plane (``--kubernetes``): over 30
simulated minutes of random bursts (Jobs of 1-3 eight-GPU preemptible pods, each running 1 to
10 simulated minutes) and random reclaims (a running preemptible node taken back with the 5-minute
drain window), the controller keeps the work running and the target in its range.

What it asserts, whatever the seed:

* **No scale-down drained a busy node.** Every pod the simulator evicted (the ``DisruptionTarget``
  condition) was on a node a *reclaim* took; no pod was evicted from a node a scale-down removed.
* **Targeted scale-down held.** Every preemptible node a lowered target removed was one the
  controller had marked (its ``ScaleDown`` Event), never another one.
* **The target stayed in [floor, ceiling]**, at every scan's sampling and in every decision the
  controller logged, once it had first reached the floor.
* **Few PUTs.** A burst raises the target at most twice (its pods can be seen in two scans) and a
  reclaim never does; every lowering removes at least one node.
* **The work is done and the range is back at the floor**: every Job completes, reclaimed pods
  included, and the target returns to the floor with nothing left cordoned for a scale-down.

Simulated time moves in 20 s steps; after each, the test waits for the Kubernetes side to catch
up with the clock and for two of the controller's scans (real time: 0.5 s scans, a 2 s unneeded
window), so the controller sees every state the soak passes through.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

from testkit.kube import KubeClient
from testkit.wait import wait_for
from tests.integration.conftest import SIM_KEY, ReadyCluster
from tests.kube_helpers import (
    AutoscalerProcess,
    PodRecorder,
    cluster_puts,
    surviving_job,
)
from tests.specs import CLUSTER_SPEC
from together_api.wire import Cluster
from together_facts.values import COMPUTE_CLASS_LABEL, PREEMPTIBLE, PREEMPTION_REASONS

SEED = 26
STEP = 20.0
"""Simulated seconds per step."""
STEPS = 95
"""95 steps of 20 s: 31 min 40 s."""
FLOOR, CEILING = 8, 32
BURST_CHANCE, RECLAIM_CHANCE = 0.12, 0.07
JOBS = "/apis/batch/v1/namespaces/default/jobs"
LOGGED_TARGET = re.compile(r"target (\d+) -> (\d+)")


def test_a_30_minute_soak_of_bursts_and_reclaims(
    ready_cluster: ReadyCluster, tmp_path: Path
) -> None:
    sim, cid = ready_cluster.sim, ready_cluster.cluster_id
    sim.set_capacity(CLUSTER_SPEC["region"], CLUSTER_SPEC["gpu_type"], preemptible_gpus=64)
    rng = random.Random(SEED)
    admin = KubeClient(ready_cluster.kubeconfig.read_text())
    log = tmp_path / "controller.log"
    scaler = AutoscalerProcess(sim, SIM_KEY, cid, ready_cluster.kubeconfig, log, **{
        "--min-preemptible-gpus": FLOOR, "--max-preemptible-gpus": CEILING,
        "--scale-down-unneeded-seconds": 2})  # fmt: skip
    jobs: list[str] = []
    reclaimed: set[str] = set()
    sampled: list[int] = []
    try:
        with ready_cluster.together() as together, PodRecorder(admin, sim) as recorder:
            wait_for(lambda: together.get_cluster(cid).desired_preemptible_gpus == FLOOR,
                       "the target raised to the floor")  # fmt: skip
            start = sim.now()
            for step in range(STEPS):
                if rng.random() < BURST_CHANCE:
                    name = f"burst-{step}"
                    pods, run = rng.randint(1, 3), rng.randrange(60, 601, 60)
                    admin.request("POST", JOBS, surviving_job(name, pods, run))
                    jobs.append(name)
                if rng.random() < RECLAIM_CHANCE:
                    running = _running_preemptible_nodes(admin)
                    if running:
                        reclaimed.update(sim.reclaim(cid, node_ids=[rng.choice(running)]))
                sim.advance(STEP)
                sim.mirrored(cid)
                scaler.scanned(2)
                sampled.append(together.get_cluster(cid).desired_preemptible_gpus)
            assert sim.now() - start >= 30 * 60
            assert jobs and reclaimed, (jobs, reclaimed)  # the seed made both happen
            _no_busy_node_scaled_down(recorder, together.get_cluster(cid), reclaimed)

            # Quiet: the work finishes, the idle nodes go, the target returns to the floor.
            wait_for(lambda: all(_complete(admin, j) for j in jobs), "every Job complete",
                       each=lambda: sim.advance(STEP), timeout=300)  # fmt: skip
            wait_for(lambda: _at_floor(together.get_cluster(cid)), "the target at the floor",
                       each=lambda: sim.advance(STEP), timeout=180)  # fmt: skip
            cluster = together.get_cluster(cid)
            _no_busy_node_scaled_down(recorder, cluster, reclaimed)
    finally:
        scaler.stop()

    scaled_down, taken = _removed(cluster, reclaimed)
    _no_busy_node_scaled_down(recorder, cluster, reclaimed)
    named = {e["involvedObject"]["name"] for e in admin.events("ScaleDown", "default")}
    assert scaled_down and scaled_down <= named, (scaled_down, named)

    logged = [(int(a), int(b)) for a, b in LOGGED_TARGET.findall(log.read_text())]
    targets = sampled + [after for _, after in logged]
    assert all(FLOOR <= t <= CEILING for t in targets), (sampled, logged)
    puts = len(cluster_puts(sim))
    ups = sum(1 for before, after in logged if after > before)
    assert puts <= 1 + 2 * len(jobs) + len(scaled_down), (puts, len(jobs), len(scaled_down))
    assert ups <= 2 * len(jobs)
    assert not [n for n in admin.nodes() if n["spec"].get("unschedulable")
                and n["metadata"]["name"] not in scaled_down | taken]  # fmt: skip
    admin.close()
    print(f"soak: {len(jobs)} bursts, {len(reclaimed)} reclaims, {puts} PUTs, "
          f"{len(scaled_down)} nodes scaled down, targets {sorted(set(sampled))}")  # fmt: skip


def _removed(cluster: Cluster, reclaimed: set[str]) -> tuple[set[str], set[str]]:
    """The nodes a lowered target removed, and those a reclaim took (ours or Together's)."""
    events = cluster.node_lifecycle_events or []
    scaled_down = {e.node_id for e in events if e.reason == "TogetherScaledDown"}
    return scaled_down, reclaimed | {e.node_id for e in events if e.reason in PREEMPTION_REASONS}


def _no_busy_node_scaled_down(recorder: PodRecorder, cluster: Cluster, reclaimed: set[str]) -> None:
    """Every pod evicted so far (``DisruptionTarget``) was on a node a reclaim took."""
    scaled_down, taken = _removed(cluster, reclaimed)
    evicted_from = {h.node for h in recorder.histories()
                    if any("DisruptionTarget" in s.conditions for s in h.states)}  # fmt: skip
    assert evicted_from <= taken, f"pods evicted from {evicted_from - taken}, never reclaimed"
    assert not evicted_from & scaled_down


def _running_preemptible_nodes(admin: KubeClient) -> list[str]:
    """Preemptible nodes not cordoned (a reclaim takes an active node)."""
    return [n["metadata"]["name"] for n in admin.nodes()
            if n["metadata"].get("labels", {}).get(COMPUTE_CLASS_LABEL) == PREEMPTIBLE
            and not n["spec"].get("unschedulable")]  # fmt: skip


def _complete(admin: KubeClient, job: str) -> bool:
    conditions = admin.job(job)["status"].get("conditions") or []
    return any(c["type"] == "Complete" and c["status"] == "True" for c in conditions)


def _at_floor(cluster: Cluster) -> bool:
    return cluster.desired_preemptible_gpus == cluster.allocated_preemptible_gpus == FLOOR
