"""Targeted scale-down on a real control plane (``--kubernetes``): a lowered preemptible target
drains the Node that is cordoned and annotated ``node.together.ai/delete-node-on-scale-down``,
not the newest one with a long Job pod; with no Node marked, the newest surplus goes."""

from __future__ import annotations

from typing import Any

from testkit.kube import KubeClient
from testkit.sim import SimulatorProcess
from tests.clusters import together_client
from tests.integration.test_kubernetes_sim import REQUEST, _pods, _wait_match
from tests.kube_helpers import gpu_job
from together_api.wire import ClusterCreateRequest, ClusterUpdateRequest
from together_facts.values import TARGETED_SCALE_DOWN_ANNOTATION


def _long_job(node: str) -> dict[str, Any]:
    """One 8-GPU pod for a simulated hour, pinned to ``node``."""
    selector = {"kubernetes.io/hostname": node}
    return gpu_job("long", run_seconds=3600, node_selector=selector, backoffLimit=0)


def _mark(kube: KubeClient, node: str) -> None:
    """What `kubectl cordon` and `kubectl annotate ... =true` do, in one merge patch."""
    response = kube.http.patch(
        f"/api/v1/nodes/{node}",
        json={"metadata": {"annotations": {TARGETED_SCALE_DOWN_ANNOTATION: "true"}},
              "spec": {"unschedulable": True}},
        headers={"Content-Type": "application/merge-patch+json"},
    )  # fmt: skip
    response.raise_for_status()


def _preemptible_oldest_first(sim: SimulatorProcess, cid: str) -> list[str]:
    with together_client(sim) as client:
        nodes = client.get_cluster(cid).gpu_worker_nodes
    return [n.node_id for n in nodes if n.is_preemptible and n.status == "Ready"]


def _drained(kube: KubeClient, seen: set[str]) -> str:
    """The one Node a new TogetherScaledDown Event names (besides those in ``seen``)."""
    new = kube.wait_for(
        lambda: {e["involvedObject"]["name"] for e in kube.events("TogetherScaledDown")} - seen,
        "a TogetherScaledDown Event",
    )
    [name] = new
    seen.add(name)
    return str(name)


def test_a_lowered_target_drains_the_marked_idle_node_not_the_busy_newer_one(
    frozen: SimulatorProcess,
) -> None:
    sim = frozen
    with together_client(sim) as client:
        request = ClusterCreateRequest(**REQUEST, num_preemptible_gpus=16)
        cid = client.create_cluster(request).cluster_id
        sim.advance(360 + 120)  # Ready, then two fills: an older and a newer preemptible node
        sim.control_plane(cid)
        kube = KubeClient.from_cluster(client.get_cluster(cid))
        try:
            _wait_match(sim, kube, cid)
            older, newer = _preemptible_oldest_first(sim, cid)
            kube.request("POST", "/apis/batch/v1/namespaces/default/jobs", _long_job(newer))
            kube.wait_for(lambda: _pods(kube, "Running"), "the long pod running")
            _mark(kube, older)

            client.update_cluster(cid, ClusterUpdateRequest(num_preemptible_gpus=8))
            seen: set[str] = set()
            assert _drained(kube, seen) == older
            sim.mirrored(cid)
            [busy] = _pods(kube, "Running")
            assert busy["spec"]["nodeName"] == newer  # the long pod was never touched
            assert not kube.get(f"/api/v1/nodes/{newer}")["spec"].get("unschedulable")

            # Fallback: back to two nodes, nothing marked, lower by one: the newest goes.
            sim.advance(300)  # the marked node is removed at the end of its drain window
            client.update_cluster(cid, ClusterUpdateRequest(num_preemptible_gpus=16))
            sim.advance(60)
            _wait_match(sim, kube, cid)
            remaining, newest = _preemptible_oldest_first(sim, cid)
            assert remaining == newer and newest != older
            client.update_cluster(cid, ClusterUpdateRequest(num_preemptible_gpus=8))
            assert _drained(kube, seen) == newest
        finally:
            kube.close()
