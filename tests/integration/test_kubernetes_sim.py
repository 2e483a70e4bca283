"""``python -m together_sim --kubernetes``: every simulated cluster is a real control plane.

Nodes mirror the API's nodes; a reclaim is a cordon, a Warning Event, evictions (DisruptionTarget)
with the grace period capped at 300 s, pods Failed with exit code 143, and the Node gone at T+5:00;
nothing outlives a deleted cluster or a stopped or killed simulator. Simulated time moves only
through the simulator's clock; the waits here are for real processes to catch up with it.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

from testkit.kube import KubeClient, control_plane_processes
from testkit.pulumi_env import PulumiEnv
from testkit.sim import SimulatorProcess
from testkit.wait import wait_for
from tests.clusters import cluster_stack, together_client
from tests.specs import CLUSTER_SPEC
from together_api.wire import (
    Cluster,
    ClusterCreateRequest,
    ClusterUpdateRequest,
    VolumeCreateRequest,
)

COMPUTE_CLASS = "together.ai/compute-class"
REQUEST = {**CLUSTER_SPEC, "cluster_name": "train", "billing_type": "ON_DEMAND"}


def _simulator(tmp_path: Path, kube_bin: Path, **options: Any) -> SimulatorProcess:
    return SimulatorProcess(tmp_path / "state", kubernetes=True, kube_bin=kube_bin, **options)


def _api_nodes(cluster: Cluster) -> dict[str, str]:
    """What Together reports: the nodes that are up (Ready or Draining) and their class."""
    return {
        n.node_id: "preemptible" if n.is_preemptible else "standard"
        for n in cluster.gpu_worker_nodes
        if n.status in ("Ready", "Draining")
    }


def _k8s_nodes(kube: KubeClient) -> dict[str, str]:
    """What Kubernetes shows: Ready Nodes with 8 allocatable GPUs, and their compute class."""
    found = {}
    for node in kube.nodes():
        ready = [c for c in node["status"].get("conditions", []) if c["type"] == "Ready"]
        gpus = node["status"].get("allocatable", {}).get("nvidia.com/gpu")
        if ready and ready[0]["status"] == "True" and gpus == "8":
            labels = node["metadata"]["labels"]
            found[node["metadata"]["name"]] = labels.get(COMPUTE_CLASS, "standard")
    return found


def _wait_match(sim: SimulatorProcess, kube: KubeClient, cluster_id: str) -> dict[str, str]:
    """Poll until Kubernetes' Nodes equal the API's nodes (names, classes, count)."""
    with together_client(sim) as client:

        def matched() -> dict[str, str] | None:
            api = _api_nodes(client.get_cluster(cluster_id))
            return api if api == _k8s_nodes(kube) else None

        result: dict[str, str] = kube.wait_for(matched, "Kubernetes Nodes to match the API's")
        return result


def _classes(nodes: dict[str, str]) -> list[str]:
    return sorted(nodes.values())


def test_nodes_match_through_pulumi_up_fill_target_standard_reclaim_refill(
    pulumi_env: PulumiEnv, tmp_path: Path, kube_bin: Path
) -> None:
    # The demo's time scale (a simulated minute a second), with a one-minute provisioning.
    with _simulator(
        tmp_path, kube_bin, time_scale=60, extra_args=("--provisioning-seconds", "60")
    ) as sim:
        stack, _ = cluster_stack(
            pulumi_env, sim, {"train": {**CLUSTER_SPEC, "num_preemptible_gpus": 16}}
        )
        cid = stack.up().outputs["train_id"].value
        sim.control_plane(cid)
        with together_client(sim) as client:
            kube = KubeClient.from_cluster(client.get_cluster(cid))
            kube.wait_for(lambda: client.get_cluster(cid).allocated_preemptible_gpus == 16, "fill")
            filled = _wait_match(sim, kube, cid)
            assert _classes(filled) == ["preemptible", "preemptible", "standard"]
            assert all(n.startswith("gpu-preemptible-dp-") == (c == "preemptible")
                       for n, c in filled.items())  # fmt: skip

            client.update_cluster(cid, ClusterUpdateRequest(num_preemptible_gpus=8))
            [drained] = kube.wait_for(
                lambda: [e["involvedObject"]["name"] for e in kube.events("TogetherScaledDown")],
                "the scale-down Event",
            )
            assert drained.startswith("gpu-preemptible-dp-")
            assert kube.get(f"/api/v1/nodes/{drained}")["spec"].get("unschedulable") is True
            sim.advance(300)
            lowered = _wait_match(sim, kube, cid)
            assert _classes(lowered) == ["preemptible", "standard"] and drained not in lowered

            client.update_cluster(cid, ClusterUpdateRequest(num_gpus=16))
            sim.advance(120)  # a new standard node boots
            kube.wait_for(
                lambda: _classes(_k8s_nodes(kube)) == ["preemptible", "standard", "standard"],
                "the second standard Node",
            )
            _wait_match(sim, kube, cid)
            client.update_cluster(cid, ClusterUpdateRequest(num_gpus=8))
            assert _classes(_wait_match(sim, kube, cid)) == ["preemptible", "standard"]

            [reclaimed] = sim.reclaim(cid)
            sim.advance(300)
            kube.wait_for(lambda: reclaimed not in _k8s_nodes(kube), "the reclaimed Node gone")
            sim.advance(60)
            kube.wait_for(lambda: client.get_cluster(cid).allocated_preemptible_gpus == 8, "refill")
            refilled = _wait_match(sim, kube, cid)
            assert _classes(refilled) == ["preemptible", "standard"]
            assert reclaimed not in refilled
            kube.close()
        stack.destroy()  # the cluster goes, and with it every control-plane process
        _wait_no_processes(sim.state_dir / "kube")


def _job(name: str) -> dict[str, Any]:
    """A CheckpointingWorker-shaped Job: two indexes on preemptible nodes, 8 GPUs each."""
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "completionMode": "Indexed",
            "completions": 2,
            "parallelism": 2,
            "backoffLimit": 0,
            "podReplacementPolicy": "Failed",
            "podFailurePolicy": {
                "rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]
            },
            "template": {
                "metadata": {
                    "annotations": {
                        "together-sim/run-seconds": "3600",
                        "together-sim/sigterm-seconds": "30",
                    }
                },
                "spec": {
                    "restartPolicy": "Never",
                    "terminationGracePeriodSeconds": 600,  # above the window: capped at 300
                    "nodeSelector": {COMPUTE_CLASS: "preemptible"},
                    "containers": [
                        {
                            "name": "worker",
                            "image": "example.invalid/worker:1",
                            "resources": {"limits": {"nvidia.com/gpu": "8"}},
                            "volumeMounts": [{"name": "ckpt", "mountPath": "/ckpt"}],
                        }
                    ],
                    "volumes": [{"name": "ckpt", "persistentVolumeClaim": {"claimName": "ckpt"}}],
                },
            },
        },
    }


def _pods(kube: KubeClient, phase: str | None = None) -> list[dict[str, Any]]:
    pods = kube.pods()
    return [p for p in pods if phase is None or p["status"].get("phase") == phase]


def _condition(pod: dict[str, Any], kind: str) -> dict[str, Any] | None:
    found = [c for c in pod["status"].get("conditions", []) if c["type"] == kind]
    return found[0] if found else None


def test_ready_means_the_kubeconfig_answers_with_the_nodes_at_once(
    frozen: SimulatorProcess,
) -> None:
    """The API holds the cluster in its last phase until its control plane serves its nodes, so a
    client that waits for Ready (as the provider does before it hands the kubeconfig to
    pulumi-kubernetes) can use the kubeconfig at once.

    The window a client could fall into (the world Ready, the Nodes not yet created) lasts one
    0.2 s mirror pass; here it is held open for certain: the API server is paused (SIGSTOP)
    while the clock jumps to Ready, so no pass can mirror the Ready world until it resumes. The
    decision itself is unit-tested in tests/unit/test_sim_kube_mirror.py."""
    sim = frozen
    with together_client(sim) as client:
        cid = client.create_cluster(ClusterCreateRequest(**REQUEST)).cluster_id
        sim.advance(200)  # the data plane is up: the control plane starts; no node is up yet
        apiserver = sim.control_plane(cid)["pids"]["kube-apiserver"]
        sim.mirrored(cid)  # a complete pass, over the provisioning world
        os.kill(apiserver, signal.SIGSTOP)
        try:
            sim.advance(160)  # Ready in the world
            held = client.get_cluster(cid)
        finally:
            os.kill(apiserver, signal.SIGCONT)
        assert held.status == "RunningAcceptanceTests", "Ready before Kubernetes serves its nodes"
        ready = client.wait_until_ready(cid, timeout=120)
        kube = KubeClient.from_cluster(ready)
        try:
            assert {n["metadata"]["name"] for n in kube.nodes()} == set(_api_nodes(ready))
        finally:
            kube.close()


def test_a_reclaim_cordons_warns_evicts_fails_143_removes_at_5_minutes_and_refills(
    frozen: SimulatorProcess,
) -> None:
    sim = frozen
    with together_client(sim) as client:
        request = ClusterCreateRequest(
            **REQUEST,
            num_preemptible_gpus=16,
            shared_volume=VolumeCreateRequest(
                volume_name="ckpt-vol", size_tib=2, region=CLUSTER_SPEC["region"]
            ),
        )
        cid = client.create_cluster(request).cluster_id
        sim.advance(360 + 120)  # Ready, then two fills
        sim.control_plane(cid)
        kube = KubeClient.from_cluster(client.get_cluster(cid))
        _wait_match(sim, kube, cid)

        # The attached volume is a static ReadWriteMany PV a CheckpointingWorker claim binds to.
        pv = kube.wait_for(lambda: kube.get("/api/v1/persistentvolumes/ckpt-vol"), "the PV")
        assert pv["spec"]["accessModes"] == ["ReadWriteMany"]
        assert pv["spec"]["capacity"]["storage"] == "2Ti"
        kube.claim_volume("ckpt", "ckpt-vol")
        kube.wait_for(
            lambda: kube.get("/api/v1/namespaces/default/persistentvolumeclaims/ckpt")["status"]
            .get("phase") == "Bound",
            "the claim to bind",
        )  # fmt: skip

        kube.request("POST", "/apis/batch/v1/namespaces/default/jobs", _job("sweep"))
        running = kube.wait_for(
            lambda: (lambda r: r if len(r) == 2 else None)(_pods(kube, "Running")), "2 pods"
        )
        on = {p["spec"]["nodeName"]: p["metadata"]["name"] for p in running}
        assert all(n.startswith("gpu-preemptible-dp-") for n in on) and len(on) == 2
        kube.wait_for(
            lambda: all("together-sim/started-at" in p["metadata"].get("annotations", {})
                        for p in _pods(kube, "Running")),
            "start times",
        )  # fmt: skip
        target, spared = sorted(on)
        victim = on[target]

        # T+0: cordon, Warning Event, eviction (DisruptionTarget), grace capped at 300 s.
        assert sim.reclaim(cid, node_ids=[target]) == [target]
        node = kube.wait_for(
            lambda: (lambda n: n if n["spec"].get("unschedulable") else None)(
                kube.get(f"/api/v1/nodes/{target}")
            ),
            "the cordon",
        )
        assert node["metadata"]["name"] == target
        [event] = kube.wait_for(lambda: kube.events("TogetherPreemptionNotified"), "the Event")
        assert event["type"] == "Warning"
        assert event["involvedObject"] == {
            **event["involvedObject"],
            "kind": "Node",
            "name": target,
        }
        path = f"/api/v1/namespaces/default/pods/{victim}"
        evicted = kube.wait_for(  # the eviction API sets the condition, then deletes
            lambda: (
                lambda p: (
                    p
                    if _condition(p, "DisruptionTarget") and p["metadata"].get("deletionTimestamp")
                    else None
                )
            )(kube.get(path)),
            "the eviction: DisruptionTarget and a deletion timestamp",
        )
        assert evicted["metadata"]["deletionGracePeriodSeconds"] == 300
        assert evicted["status"]["phase"] == "Running"  # its SIGTERM handler takes 30 s

        sim.advance(30)
        failed = kube.wait_for(
            lambda: (lambda p: p if p["status"].get("phase") != "Running" else None)(
                kube.get(path)
            ),
            "the victim to exit",
        )
        assert failed["status"]["phase"] == "Failed"
        [state] = [c["state"] for c in failed["status"]["containerStatuses"]]
        assert state["terminated"]["exitCode"] == 143
        assert _condition(failed, "DisruptionTarget") is not None
        assert kube.get(f"/api/v1/nodes/{target}")["metadata"]["name"] == target  # T+30: there
        other = kube.get(f"/api/v1/namespaces/default/pods/{on[spared]}")
        assert other["status"]["phase"] == "Running" and not _condition(other, "DisruptionTarget")

        sim.advance(300 - 30 - 1)  # T+4:59: still there
        sim.mirrored(cid)  # Kubernetes now shows what the simulator decided for T+4:59
        assert target in _k8s_nodes(kube)
        sim.advance(1)  # T+5:00
        kube.wait_for(lambda: target not in {n["metadata"]["name"] for n in kube.nodes()}, "gone")

        sim.advance(60)  # the refill
        refilled = _wait_match(sim, kube, cid)
        assert target not in refilled and _classes(refilled).count("preemptible") == 2
        job_path = "/apis/batch/v1/namespaces/default/jobs/sweep"
        replacement = kube.wait_for(
            lambda: [
                p
                for p in _pods(kube, "Running")
                if p["spec"]["nodeName"] not in on
                and "together-sim/started-at" in p["metadata"]["annotations"]
            ],
            "the replacement pod running on the new Node",
        )
        assert len(replacement) == 1
        assert not kube.get(job_path)["status"].get("failed")  # the reclaim is not a failure

        sim.advance(3600)  # every index runs its full time
        done = kube.wait_for(
            lambda: (lambda j: j if j["status"].get("succeeded") == 2 else None)(
                kube.get(job_path)
            ),
            "the Job to complete",
        )
        assert not done["status"].get("failed")
        kube.close()


def _wait_no_processes(marker: Path, timeout: float = 60.0) -> None:
    """Real time: each control-plane process under `marker` ends once it is told to."""
    wait_for(
        lambda: not control_plane_processes(marker),
        f"every control-plane process under {marker} to end",
        timeout=timeout,
    )


def _cluster_with_control_plane(sim: SimulatorProcess) -> str:
    with together_client(sim) as client:
        cid = client.create_cluster(ClusterCreateRequest(**REQUEST)).cluster_id
    sim.advance(360)
    sim.control_plane(cid)
    return cid


def test_no_process_outlives_a_deleted_cluster_or_a_stopped_or_killed_simulator(
    tmp_path: Path, kube_bin: Path
) -> None:
    sim = _simulator(tmp_path / "a", kube_bin, time_scale=0).start()
    try:
        cid = _cluster_with_control_plane(sim)
        cluster_dir = sim.state_dir / "kube" / cid
        assert len(control_plane_processes(cluster_dir)) == 5  # etcd, apiserver, kcm, sched, kwok
        with together_client(sim) as client:
            client.delete_cluster(cid)
        _wait_no_processes(cluster_dir)
        _cluster_with_control_plane(sim)
        assert control_plane_processes(sim.state_dir)
    finally:
        sim.stop()  # SIGTERM (after 40 s SIGKILL, and the kernel kills its children then)
    _wait_no_processes(sim.state_dir, timeout=10)

    killed = _simulator(tmp_path / "b", kube_bin, time_scale=0).start()
    try:
        _cluster_with_control_plane(killed)
        assert len(control_plane_processes(killed.state_dir)) == 5
        os.kill(killed.pid, signal.SIGKILL)
        _wait_no_processes(killed.state_dir, timeout=10)
    finally:
        killed.stop()
