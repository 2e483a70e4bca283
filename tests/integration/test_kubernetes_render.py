"""The Kubernetes examples through the real engine and the real pulumi-kubernetes plugin.

The plugin runs in render mode (`renderYamlToDirectory`): it writes the manifests it would apply,
so no Kubernetes cluster is needed, while the Cluster itself is created in the simulator. The
plugin is found ambiently on PATH; automatic plugin downloads stay disabled.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from pulumi import automation as auto

from testkit.pulumi_env import REPO, PulumiEnv, provider_config
from testkit.sim import SimulatorProcess
from tests.clusters import live_clusters, preview_error
from tests.hosts import HOSTS, HostName
from tests.kube_helpers import assert_checkpointing_job_spec

API_KEY = "sk-test-key-5f1e9c3a7b"
FAST = {"time_scale": 600, "api_key": API_KEY}
pytestmark = [pytest.mark.engine, pytest.mark.parametrize("simulator", [FAST], indirect=True)]

EXAMPLES = REPO / "examples"
LABEL = "together.ai/compute-class"
NOT_PREEMPTIBLE = {"key": LABEL, "operator": "NotIn", "values": ["preemptible"]}


def _stack(env: PulumiEnv, sim: SimulatorProcess, example: str, **config: Any) -> auto.Stack:
    work = env.project(EXAMPLES / example)
    return env.stack(
        work,
        config={
            **provider_config(sim),
            "renderYamlTo": str(env.root / "rendered"),
            "projectId": "proj-test",
            **config,
        },
    )


def _manifests(env: PulumiEnv) -> dict[tuple[str, str], dict[str, Any]]:
    """Every rendered manifest, keyed by (kind, name)."""
    docs = [
        doc
        for path in sorted((env.root / "rendered").rglob("*.yaml"))
        for doc in yaml.safe_load_all(path.read_text())
        if doc
    ]
    return {(doc["kind"], doc["metadata"]["name"]): doc for doc in docs}


def test_burst_inference_renders_standard_serving_and_preemptible_burst(
    k8s_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    stack = _stack(k8s_env, simulator, "burst-inference")
    result = stack.up()
    assert result.outputs["deployments"].value == ["llm-serve", "llm-burst"]
    manifests = _manifests(k8s_env)

    # `pulumi up` waits for the standard replicas only, never for preemptible capacity.
    assert "annotations" not in manifests[("Deployment", "llm-serve")]["metadata"]
    burst_metadata = manifests[("Deployment", "llm-burst")]["metadata"]
    assert burst_metadata["annotations"] == {"pulumi.com/skipAwait": "true"}
    serve = manifests[("Deployment", "llm-serve")]["spec"]
    serve_pod = serve["template"]["spec"]
    assert serve["replicas"] == 2
    assert serve["template"]["metadata"]["labels"][LABEL] == "standard"
    assert "nodeSelector" not in serve_pod
    required = serve_pod["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]
    assert required == {"nodeSelectorTerms": [{"matchExpressions": [NOT_PREEMPTIBLE]}]}

    burst = manifests[("Deployment", "llm-burst")]["spec"]
    burst_pod = burst["template"]["spec"]
    assert burst["replicas"] == 4
    assert burst["template"]["metadata"]["labels"][LABEL] == "preemptible"
    assert burst_pod["nodeSelector"] == {LABEL: "preemptible"}
    assert burst_pod["terminationGracePeriodSeconds"] == 60
    assert "affinity" not in burst_pod

    # A budget guards the standard replicas only: a reclaim ignores budgets anyway.
    pdbs = [name for kind, name in manifests if kind == "PodDisruptionBudget"]
    assert pdbs == ["llm-serve"]
    pdb = manifests[("PodDisruptionBudget", "llm-serve")]["spec"]
    assert pdb == {"maxUnavailable": 1, "selector": serve["selector"]}

    # One Service spreads traffic over both compute classes.
    service = manifests[("Service", "llm")]["spec"]
    assert service["selector"] == {"app.kubernetes.io/name": "llm"}
    for deployment in (serve, burst):
        assert service["selector"].items() <= deployment["template"]["metadata"]["labels"].items()


@pytest.mark.parametrize("host_name", sorted(HOSTS))
def test_sweep_renders_a_checkpointing_job_array_on_preemptible_nodes(
    host_k8s_env: PulumiEnv, simulator: SimulatorProcess, host_name: HostName
) -> None:
    """On either host's Cluster: the workloads read the same attributes of both
    (`kubernetes.WorkloadCluster`), so the claim binds the shared volume on both."""
    stack = _stack(
        host_k8s_env,
        simulator,
        "sweep",
        host=host_name,
        trials="12",
        parallelism="3",
        podAnnotations='{"together-sim/run-seconds": 600}',
    )
    assert stack.up().outputs["job"].value == "sweep"
    manifests = _manifests(host_k8s_env)

    job = manifests[("Job", "sweep")]
    assert job["metadata"]["annotations"]["pulumi.com/skipAwait"] == "true"
    spec = job["spec"]
    assert_checkpointing_job_spec(spec, completions=12, parallelism=3)
    assert spec["template"]["metadata"]["labels"][LABEL] == "preemptible"
    assert spec["template"]["metadata"]["annotations"] == {"together-sim/run-seconds": "600"}
    pod = spec["template"]["spec"]
    assert pod["restartPolicy"] == "Never"
    assert pod["terminationGracePeriodSeconds"] == 300
    assert pod["nodeSelector"] == {LABEL: "preemptible"}
    (container,) = pod["containers"]
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env == {
        "CHECKPOINT_DIR": "/checkpoints",
        "DRAIN_WINDOW_SECONDS": "300",
        "TOGETHER_COMPUTE_CLASS": "preemptible",
        "POD_NAME": None,  # from the downward API: together_worker's status file records it
    }
    pod_name = {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}
    assert pod_name in container["env"]
    assert container["volumeMounts"] == [{"name": "checkpoints", "mountPath": "/checkpoints"}]
    assert pod["volumes"] == [
        {"name": "checkpoints", "persistentVolumeClaim": {"claimName": "sweep-checkpoints"}}
    ]
    # The claim binds to the shared volume's static PersistentVolume (named after the volume).
    claim_manifest = manifests[("PersistentVolumeClaim", "sweep-checkpoints")]
    # Awaited by its binding, not by pulumi-kubernetes' storage-class lookup (it has none).
    annotations = claim_manifest["metadata"]["annotations"]
    assert annotations["pulumi.com/waitFor"] == "jsonpath={.status.phase}=Bound"
    claim = claim_manifest["spec"]
    assert claim["volumeName"] == "sweep-checkpoints"
    assert claim["storageClassName"] == ""
    assert claim["accessModes"] == ["ReadWriteMany"]
    assert claim["resources"]["requests"]["storage"] == "500Gi"
    (cluster,) = live_clusters(simulator)
    volume_id = stack.outputs()["checkpoint_volume_id"].value
    assert [(v.volume_id, v.volume_name) for v in cluster.volumes] == [
        (volume_id, "sweep-checkpoints")
    ]
    assert not [kind for kind, _ in manifests if kind == "PodDisruptionBudget"]
    # The evaluation server stays on the standard node.
    evaluation = manifests[("Deployment", "sweep-eval")]["spec"]["template"]
    assert evaluation["metadata"]["labels"][LABEL] == "standard"
    assert "nodeSelector" not in evaluation["spec"]


def test_preemptible_workload_on_a_zero_target_cluster_warns_at_preview(
    k8s_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    stack = _stack(k8s_env, simulator, "sweep", cluster='{"num_preemptible_gpus": 0}')
    preview = stack.preview()
    assert "workload 'sweep' needs preemptible nodes" in preview.stdout
    assert "preemptible target of 0" in preview.stdout
    assert simulator.requests() == []


def test_grace_period_past_the_drain_window_fails_at_preview(
    k8s_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    stack = _stack(k8s_env, simulator, "sweep", drainSeconds="600")
    error = preview_error(stack)
    assert "workload 'sweep': terminationGracePeriodSeconds=600" in error
    assert "300 s drain window" in error
    assert "terminationGracePeriodSeconds <= 300" in error
    assert simulator.requests() == []
