"""Together's `auto_scale` on a real control plane (``--kubernetes``): a pod the scheduler marks
Unschedulable for lack of GPUs makes the simulator's autoscaler add a standard node (up to the
ceiling); once the work is done and the node idle for the unneeded window, it goes again, never
below the floor. The simulated clock moves only when the test advances it."""

from __future__ import annotations

from typing import Any

from testkit.kube import KubeClient
from testkit.sim import SimulatorProcess
from tests.clusters import together_client
from tests.integration.test_kubernetes_sim import REQUEST, _pods
from tests.kube_helpers import gpu_job, started_pods
from together_api.wire import ClusterCreateRequest


def _job(pods: int) -> dict[str, Any]:
    """`pods` pods of 8 GPUs for ten simulated minutes, on any node (standard ones included)."""
    return gpu_job("batch", run_seconds=600, pods=pods)


def test_pending_pods_scale_standard_nodes_up_to_the_ceiling_and_idle_ones_back_to_the_floor(
    frozen: SimulatorProcess,
) -> None:
    sim = frozen
    with together_client(sim) as client:
        request = ClusterCreateRequest(**REQUEST, auto_scale=True, auto_scale_max_gpus=16)
        cid = client.create_cluster(request).cluster_id
        sim.advance(360)
        sim.control_plane(cid)
        kube = KubeClient.from_cluster(client.get_cluster(cid))
        try:
            # Three pods, one 8-GPU node: two wait; the ceiling (16) allows one more node only.
            kube.request("POST", "/apis/batch/v1/namespaces/default/jobs", _job(3))
            kube.wait_for(lambda: client.get_cluster(cid).num_gpus == 16, "a scale-up to 16")
            sim.advance(120)  # the new node boots
            first = kube.wait_for(
                lambda: started if len(started := started_pods(kube)) == 2 else None,
                "two pods started",
            )
            first_names = {p["metadata"]["name"] for p in first}
            assert client.get_cluster(cid).num_gpus == 16  # never above the ceiling
            [waiting] = _pods(kube, "Pending")
            assert not waiting["spec"].get("nodeName")

            # The work finishes; the idle node goes after the unneeded window, the floor stays.
            sim.advance(600)
            kube.wait_for(
                lambda: [p for p in started_pods(kube) if p["metadata"]["name"] not in first_names],
                "the third pod started",
            )
            sim.advance(600)
            kube.wait_for(lambda: kube.job("batch")["status"].get("succeeded") == 3, "the Job done")

            def scaled_back() -> bool:
                sim.advance(60)  # the clock moves only here: the idle window passes
                return client.get_cluster(cid).num_gpus == 8

            kube.wait_for(scaled_back, "the idle node removed")
            sim.mirrored(cid)
            standard = [n for n in kube.nodes() if "together.ai/compute-class" not in
                        n["metadata"]["labels"]]  # fmt: skip
            assert len(standard) == 1
            reasons = [e.reason for e in client.get_cluster(cid).node_lifecycle_events or []]
            assert reasons.count("TogetherScaledUp") == 1
            assert reasons.count("TogetherScaledDown") == 1
        finally:
            kube.close()
