"""The Kubernetes examples applied for real: the real engine, the real pulumi-kubernetes plugin,
and the simulator's real control plane (`--kubernetes`: an API server, its controllers and KWOK
nodes that mirror the Together nodes).

What a test here judges is what Kubernetes did: where the scheduler put each pod, how the Job
controller counted a reclaimed pod, whether the Deployment noticed anything. Simulated time
moves only when a test advances the simulator's clock (its time scale is 0).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from pulumi import automation as auto

from testkit.kube import KubeClient, control_plane_processes, kube_bin_or_skip
from testkit.pulumi_env import REPO, PulumiEnv, provider_config
from testkit.sim import SimulatorProcess
from testkit.wait import wait_for
from tests.clusters import live_clusters
from tests.hosts import HOSTS, HostName
from tests.kube_helpers import (
    RUN_SECONDS_ANNOTATION,
    PodHistory,
    PodRecorder,
    advancing,
    cluster_api,
    node_classes,
    reclaim,
    sim_clock,
)

API_KEY = "sk-test-key-5f1e9c3a7b"
KUBERNETES = {"time_scale": 0, "api_key": API_KEY, "kubernetes": True}
pytestmark = [pytest.mark.engine, pytest.mark.parametrize("simulator", [KUBERNETES], indirect=True)]

RUN_SECONDS = 1800
"""How long each trial runs, in simulated seconds (the pods' `together-sim/run-seconds`)."""
STEP = 60.0
"""Simulated seconds the clock moves per poll while something runs: also how precisely a test
knows when a pod ended (its start is stamped on the pod)."""
TRIALS, PARALLELISM = 8, 3


class Workloads:
    """The cluster's API server and a record of every pod, connected as soon as it answers (so
    the record starts before `pulumi up` creates the first pod)."""

    def __init__(self, sim: SimulatorProcess) -> None:
        self.sim = sim
        self._api: KubeClient | None = None
        self._pods: PodRecorder | None = None
        self.classes: dict[str, str] = {}

    def connect(self) -> None:
        if self._api is None and (api := cluster_api(self.sim)) is not None:
            self._api, self._pods = api, PodRecorder(api, self.sim).__enter__()

    @property
    def api(self) -> KubeClient:
        self.connect()
        assert self._api is not None, "the cluster's API server never answered"
        return self._api

    @property
    def pods(self) -> PodRecorder:
        self.connect()
        assert self._pods is not None, "the cluster's API server never answered"
        return self._pods

    def note_nodes(self) -> None:
        """Remember every node's compute class (reclaimed nodes are deleted later)."""
        self.classes |= node_classes(self.api)

    def close(self) -> None:
        if self._pods is not None:
            self._pods.__exit__(None, None, None)
        if self._api is not None:
            self._api.close()


@pytest.fixture(autouse=True)
def _control_plane_built() -> None:
    """Outside `make test`, a machine that never built the control plane skips with the fix
    (autouse fixtures come first, so before the simulator starts)."""
    kube_bin_or_skip()


@pytest.fixture
def workloads(simulator: SimulatorProcess) -> Iterator[Workloads]:
    live = Workloads(simulator)
    yield live
    live.close()


def _stack(env: PulumiEnv, sim: SimulatorProcess, example: str, **config: Any) -> auto.Stack:
    work = env.project(REPO / "examples" / example)
    return env.stack(
        work,
        config={
            **provider_config(sim),
            "projectId": "proj-test",
            **config,
        },
    )


def _job_pods(history: PodHistory) -> bool:
    return history.labels.get("app.kubernetes.io/name") == "sweep" and history.index is not None


def _running_job_pods(live: Workloads) -> list[dict[str, Any]]:
    pods = live.api.pods("app.kubernetes.io/name=sweep")
    return [
        p
        for p in pods
        if p.get("status", {}).get("phase") == "Running"
        and "deletionTimestamp" not in p["metadata"]
    ]


def _fresh_trials(live: Workloads, count: int) -> dict[str, PodHistory] | None:
    """`count` running trials on distinct nodes, each with at least half its run time left (so
    a reclaim now surely cuts it short), newest first; node -> the pod's history."""
    now = sim_clock(live.sim)
    running = {p["metadata"]["name"] for p in _running_job_pods(live)}
    fresh = []
    for history in live.pods.histories(lambda h: _job_pods(h) and h.name in running):
        started = history.started_at
        if started is not None and history.node and now - started < RUN_SECONDS / 2:
            fresh.append((started, history))
    chosen: dict[str, PodHistory] = {}
    for _, history in sorted(fresh, key=lambda pair: -pair[0]):
        if history.node is not None and history.node not in chosen and len(chosen) < count:
            chosen[history.node] = history
    return chosen if len(chosen) == count else None


def _reclaim(live: Workloads, cluster_id: str, targets: dict[str, PodHistory]) -> set[str]:
    """Reclaim the nodes of `targets`, one call each; the names of the trial pods cut short."""
    live.note_nodes()
    for node in targets:
        assert reclaim(live.sim, cluster_id, [node]) == [node]

    def cordoned_and_notified() -> bool:
        """T+0: each node cordoned, with a Warning event on it that says why."""
        cordoned = all(
            live.api.get(f"/api/v1/nodes/{node}")["spec"].get("unschedulable") is True
            for node in targets
        )
        notified = {
            e["involvedObject"]["name"]
            for e in live.api.events("TogetherPreemptionNotified")
            if e["type"] == "Warning"
        }
        return cordoned and set(targets) <= notified

    # The mirror acts within a pass of the simulator (no clock advance: still T+0).
    wait_for(cordoned_and_notified, "the reclaimed nodes cordoned and notified", timeout=30)
    return {h.name for h in targets.values()}


def _ended(live: Workloads, names: set[str]) -> list[PodHistory]:
    """The histories of the pods `names`, once every one of them has ended."""
    pods = live.pods.histories(lambda h: h.name in names)
    ended = [h for h in pods if h.final.phase in ("Succeeded", "Failed")]
    return pods if len(pods) == len(names) and len(ended) == len(pods) else []


def _runs_again(live: Workloads, indexes: set[str], cut: set[str]) -> bool:
    """Every index of `indexes` has a pod other than the cut ones running (or done)."""
    running = {
        h.index
        for h in live.pods.histories(_job_pods)
        if h.name not in cut and h.final.phase in ("Running", "Succeeded")
    }
    return indexes <= running


def _reclaim_and_requeue(live: Workloads, cluster_id: str, count: int, cut: set[str]) -> set[str]:
    """Reclaim `count` nodes that run fresh trials, then wait for those trials to end and for
    their indexes to run again on the refill; the names of the pods cut short."""
    sim = live.sim
    targets = wait_for(
        lambda: _fresh_trials(live, count), f"{count} trial(s) to cut", each=lambda: sim.advance(30)
    )
    names = _reclaim(live, cluster_id, targets)
    wait_for(
        lambda: _ended(live, names), "the reclaimed trials to end", each=lambda: sim.advance(30)
    )
    indexes = {h.index for h in targets.values() if h.index is not None}
    wait_for(
        lambda: _runs_again(live, indexes, cut | names),
        f"indexes {sorted(indexes)} to run again after the refill",
        each=lambda: sim.advance(30),
    )
    return names


def test_sweep_survives_reclaims_without_using_its_backoff_limit(
    k8s_env: PulumiEnv, simulator: SimulatorProcess, workloads: Workloads
) -> None:
    stack = _stack(
        k8s_env,
        simulator,
        "sweep",
        cluster=json.dumps({"num_gpus": 8, "num_preemptible_gpus": 8 * PARALLELISM}),
        trials=str(TRIALS),
        parallelism=str(PARALLELISM),
        backoffLimit="0",  # a single counted failure would fail the Job
        servingReplicas="2",
        podAnnotations=json.dumps({RUN_SECONDS_ANNOTATION: str(RUN_SECONDS)}),
    )
    up = advancing(stack.up, simulator, STEP, on_tick=workloads.connect)
    cluster_id = up.outputs["cluster_id"].value
    live = workloads
    # A quiet run: the plugin comes from the plugin cache, and the claim of the shared volume
    # (no storage class) is awaited by its binding.
    assert "pulumi-resource-kubernetes from $PATH" not in up.stdout + up.stderr
    assert "no storage class found" not in up.stdout + up.stderr

    # The trials start on the three preemptible nodes once the fill has added them.
    wait_for(
        lambda: len(_running_job_pods(live)) == PARALLELISM,
        "a trial running on each preemptible node",
        each=lambda: simulator.advance(30),
    )
    live.note_nodes()
    claim = live.api.get("/api/v1/namespaces/default/persistentvolumeclaims/sweep-checkpoints")
    assert claim["status"]["phase"] == "Bound"
    assert claim["spec"]["volumeName"] == "sweep-checkpoints"  # the shared volume's static PV
    serving_before = live.api.deployment("sweep-eval")
    serving_pods = {
        p["metadata"]["name"]: p["spec"]["nodeName"]
        for p in live.api.pods("app.kubernetes.io/instance=sweep-eval")
    }
    assert len(serving_pods) == 2

    # Mid-run, one reclaim; then, once the index runs again, two in a row.
    simulator.advance(RUN_SECONDS / 4)
    cut = _reclaim_and_requeue(live, cluster_id, 1, cut=set())
    cut |= _reclaim_and_requeue(live, cluster_id, 2, cut=cut)

    def complete() -> dict[str, Any] | None:
        live.note_nodes()
        job = live.api.job("sweep")
        done = {c["type"] for c in job["status"].get("conditions", []) if c["status"] == "True"}
        assert "Failed" not in done, f"the Job failed: {job['status']}"
        return job if "Complete" in done else None

    job = wait_for(
        complete, "the Job to complete", each=lambda: simulator.advance(2 * STEP), timeout=180
    )

    # No reclaim counted: backoffLimit is 0, the Job completed, and it counted no failure.
    assert job["status"]["succeeded"] == TRIALS
    assert job["status"].get("failed", 0) == 0
    # Each reclaimed trial ended Failed as a process stopped by SIGTERM does, marked as a
    # disruption (which is what the pod failure policy ignores), and never Succeeded.
    assert len(cut) == 3
    for pod in live.pods.histories(lambda h: h.name in cut):
        assert pod.final.phase == "Failed", f"{pod.name} ended {pod.final}"
        assert "DisruptionTarget" in {c for s in pod.states for c in s.conditions}, pod.states
        assert pod.final.exit_code in (143, None), pod.final
    # Every index was completed by exactly one pod, and that pod ran its full time: counted from
    # the simulator's start stamp on the pod, so the recorder's lag cannot shorten it.
    trials = workloads.pods.histories(_job_pods)
    done = [h for h in trials if h.final.phase == "Succeeded"]
    assert sorted(int(h.index or -1) for h in done) == list(range(TRIALS))
    for pod in done:
        ran = pod.ran_for()
        assert ran is not None and ran >= RUN_SECONDS, (pod.name, ran, pod.states)
        assert not {c for s in pod.states for c in s.conditions} & {"DisruptionTarget"}
    # Placement: trials only ever on preemptible nodes, serving only on standard ones.
    assert {live.classes[h.node] for h in trials if h.node} == {"preemptible"}
    serving = live.pods.histories(
        lambda h: h.labels.get("app.kubernetes.io/instance") == "sweep-eval"
    )
    assert {live.classes[h.node] for h in serving if h.node} == {"standard"}
    # The serving Deployment never noticed: same pods on the same nodes, same generation.
    after = live.api.deployment("sweep-eval")
    assert after["metadata"]["generation"] == serving_before["metadata"]["generation"]
    assert after["status"].get("readyReplicas") == 2
    assert {
        p["metadata"]["name"]: p["spec"]["nodeName"]
        for p in live.api.pods("app.kubernetes.io/instance=sweep-eval")
    } == serving_pods
    assert {h.name for h in serving} == set(serving_pods)


@pytest.mark.parametrize("host_name", sorted(HOSTS))
def test_the_checkpoint_claim_binds_the_shared_volume_on_either_hosts_cluster(
    host_k8s_env: PulumiEnv, simulator: SimulatorProcess, host_name: HostName
) -> None:
    """The sweep's claim is Bound to the volume's static PersistentVolume whichever host
    declares the cluster (`kubernetes.WorkloadCluster`), not provisioned from a storage class."""
    stack = _stack(
        host_k8s_env,
        simulator,
        "sweep",
        host=host_name,
        cluster=json.dumps({"num_gpus": 8, "num_preemptible_gpus": 8}),
        trials="1",
        parallelism="1",
        servingReplicas="0",
    )
    up = advancing(stack.up, simulator, STEP)
    assert "no storage class found" not in up.stdout + up.stderr
    api = cluster_api(simulator)
    assert api is not None, "the cluster's API server never answered"
    try:
        claim = api.get("/api/v1/namespaces/default/persistentvolumeclaims/sweep-checkpoints")
        assert claim["status"]["phase"] == "Bound"
        assert claim["spec"]["volumeName"] == "sweep-checkpoints"  # the volume's static PV
        assert claim["spec"]["storageClassName"] == ""
        volume = api.get("/api/v1/persistentvolumes/sweep-checkpoints")
        assert volume["spec"]["claimRef"]["name"] == "sweep-checkpoints"
    finally:
        api.close()


def test_burst_inference_applies_and_destroy_stops_the_control_plane(
    k8s_env: PulumiEnv, simulator: SimulatorProcess, workloads: Workloads
) -> None:
    stack = _stack(
        k8s_env,
        simulator,
        "burst-inference",
        cluster=json.dumps({"num_gpus": 8, "num_preemptible_gpus": 16}),
        servingReplicas="2",
        burstReplicas="4",
    )
    advancing(stack.up, simulator, STEP)
    live = workloads

    def placed() -> dict[str, set[str]] | None:
        live.note_nodes()
        where: dict[str, set[str]] = {}
        for name in ("llm-serve", "llm-burst"):
            pods = live.api.pods(f"app.kubernetes.io/instance={name}")
            ready = [p for p in pods if p.get("status", {}).get("phase") == "Running"]
            if len(ready) != live.api.deployment(name)["spec"]["replicas"]:
                return None
            where[name] = {live.classes[p["spec"]["nodeName"]] for p in ready}
        return where

    where = wait_for(placed, "every replica running", each=lambda: simulator.advance(30))
    assert where == {"llm-serve": {"standard"}, "llm-burst": {"preemptible"}}
    budgets = live.api.items("/apis/policy/v1/namespaces/default/poddisruptionbudgets")
    assert [b["metadata"]["name"] for b in budgets] == ["llm-serve"]
    service = live.api.get("/api/v1/namespaces/default/services/llm")
    assert service["spec"]["selector"] == {"app.kubernetes.io/name": "llm"}

    assert control_plane_processes(simulator.state_dir), "no control plane ran for the cluster"
    workloads.close()
    advancing(stack.destroy, simulator, STEP)
    assert live_clusters(simulator) == []
    wait_for(
        lambda: not control_plane_processes(simulator.state_dir),
        "the control plane to stop after destroy",
        timeout=60,
    )
