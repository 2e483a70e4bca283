"""Together's `auto_scale` on a real control plane (``--kubernetes``): a pod the scheduler marks
Unschedulable for lack of GPUs makes the simulator's autoscaler add the standard nodes the
pending pods pack onto (no more while they boot and register, up to the ceiling); once the work is
done and the nodes idle for the unneeded window, they go again, never below the floor. The
simulated clock moves only when the test advances it."""

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


def test_pending_pods_scale_standard_nodes_by_what_they_pack_onto_and_idle_ones_back_to_the_floor(
    frozen: SimulatorProcess,
) -> None:
    sim = frozen
    with together_client(sim) as client:
        request = ClusterCreateRequest(**REQUEST, auto_scale=True, auto_scale_max_gpus=32)
        cid = client.create_cluster(request).cluster_id
        sim.advance(360)
        sim.control_plane(cid)
        kube = KubeClient.from_cluster(client.get_cluster(cid))
        try:
            # Three pods, one 8-GPU node: two wait, and pack onto two more nodes (24), below the
            # ceiling (32), however many passes see them wait while those nodes boot and register.
            kube.request("POST", "/apis/batch/v1/namespaces/default/jobs", _job(3))
            kube.wait_for(lambda: client.get_cluster(cid).num_gpus == 24, "a scale-up to 24")
            sim.advance(120)  # the new nodes boot
            first = kube.wait_for(
                lambda: started if len(started := started_pods(kube)) == 3 else None,
                "three pods started",
            )
            sim.mirrored(cid)
            assert client.get_cluster(cid).num_gpus == 24  # the packed result, not the ceiling
            assert not _pods(kube, "Pending")

            # The work finishes; the idle nodes go after the unneeded window, the floor stays.
            sim.advance(600)
            kube.wait_for(lambda: kube.job("batch")["status"].get("succeeded") == 3, "the Job done")
            assert len(first) == 3

            def scaled_back() -> bool:
                sim.advance(60)  # the clock moves only here: the idle window passes
                return client.get_cluster(cid).num_gpus == 8

            kube.wait_for(scaled_back, "the idle nodes removed")
            sim.mirrored(cid)
            standard = [n for n in kube.nodes() if "together.ai/compute-class" not in
                        n["metadata"]["labels"]]  # fmt: skip
            assert len(standard) == 1
            reasons = [e.reason for e in client.get_cluster(cid).node_lifecycle_events or []]
            assert reasons.count("TogetherScaledUp") == 2
            assert reasons.count("TogetherScaledDown") == 2
        finally:
            kube.close()
