"""The scenario every example program in another language passes (examples/typescript,
examples/go): the same volume and `notebooks` cluster, the same outputs, the same steps, written
once for both languages' tests."""

from __future__ import annotations

from pathlib import Path

from pulumi import automation as auto

from testkit.pulumi_env import PulumiEnv
from testkit.sim import SimulatorProcess
from tests.clusters import live_clusters, preview_error, together_client
from tests.native import CLUSTER_TOKEN, VOLUME_TOKEN
from together_api.wire import ClusterUpdateRequest
from together_provider.cluster.rules import RULEBOOK

EXAMPLE_CLUSTER = {
    "cluster_name": "notebooks",
    "region": "us-central-8",
    "gpu_type": "H100_SXM",
    "num_gpus": 8,
    "num_preemptible_gpus": 16,
    "cuda_version": "12.8",
    "nvidia_driver_version": "570",
    "project_id": "proj-ml-dev",
    "cluster_config": {"load_balancer": "NONE", "observability": {"enabled": True}},
}
"""The examples' cluster as the Python rules see it (its volume aside)."""


def lives_through_up_target_change_refresh_and_destroy(
    env: PulumiEnv, sim: SimulatorProcess, work: Path, stack: auto.Stack
) -> None:
    """One stack through a whole life (one stack, so the program's start-up is paid few times):
    preview, up, a new preemptible target as exactly one in-place update, drift seen by
    refresh, destroy."""
    assert stack.preview().change_summary == {auto.OpType.CREATE: 3}
    assert sim.requests() == []

    outputs = stack.up().outputs
    assert (outputs["status"].value, outputs["standardGpus"].value) == ("Ready", 8)
    assert outputs["preemptibleTarget"].value == 16
    assert outputs["kubeconfig"].secret
    (live,) = live_clusters(sim)
    assert live.cluster_id == outputs["clusterId"].value
    assert [v.volume_id for v in live.volumes] == [outputs["volumeId"].value]
    # A nested object of the API went through the generated SDK with the API's keys, and the
    # worker nodes came back as an output.
    assert live.cluster_config == EXAMPLE_CLUSTER["cluster_config"]
    assert [n["compute_class"] for n in outputs["workerNodes"].value][:1] == ["standard"]

    # A new preemptible target is one update in place, no replace: one PUT, the volume alone.
    stack.set_config("numPreemptibleGpus", auto.ConfigValue("24"))
    sim.reset_requests()
    assert stack.preview().change_summary == {auto.OpType.UPDATE: 1, auto.OpType.SAME: 2}
    changed = stack.up()
    assert changed.summary.resource_changes == {"update": 1, "same": 2}
    writes = [(r["method"], r["status"]) for r in sim.requests() if r["method"] != "GET"]
    assert writes == [("PUT", 200)]
    assert changed.outputs["clusterId"].value == outputs["clusterId"].value
    assert changed.outputs["preemptibleTarget"].value == 24

    # Refresh reads the cluster back: a target changed outside Pulumi is drift.
    with together_client(sim) as client:
        client.update_cluster(live.cluster_id, ClusterUpdateRequest(num_preemptible_gpus=32))
    assert stack.refresh().summary.resource_changes == {"update": 1, "same": 2}
    (stored,) = env.resource_outputs(work, CLUSTER_TOKEN)
    assert stored["numPreemptibleGpus"] == 32

    assert stack.destroy().summary.resource_changes == {"delete": 3}
    assert live_clusters(sim) == []
    assert env.resource_outputs(work, VOLUME_TOKEN) == []


def refuses_zero_standard_as_python_does(stack: auto.Stack, sim: SimulatorProcess) -> None:
    """`numGpus: 0` fails the preview with the message the Python rules give for the same
    cluster, word for word, and no API call."""
    stack.set_config("numGpus", auto.ConfigValue("0"))
    error = preview_error(stack)
    spec = {**EXAMPLE_CLUSTER, "num_gpus": 0}
    (python,) = [f.reason for f in RULEBOOK.validate("notebooks", spec, None)]
    assert python.startswith("cluster 'notebooks': num_gpus=0 leaves no standard node")
    assert python in error
    assert "Traceback" not in error and "panic:" not in error
    assert sim.requests() == []
