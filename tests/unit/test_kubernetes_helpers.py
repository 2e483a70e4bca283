"""Placement helpers as plain dicts, and the components through pulumi.runtime mocks."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pulumi
import pytest
from pytest_mock import MockerFixture

from tests.kube_helpers import assert_checkpointing_job_spec
from tests.specs import CLUSTER_SPEC
from together_drill import manifest as drill_manifest
from together_provider import Cluster, ClusterArgs
from together_provider.kubernetes import (
    COMPUTE_CLASS_LABEL,
    CheckpointingWorker,
    CheckpointingWorkerArgs,
    ComputeClass,
    ServingReplicas,
    ServingReplicasArgs,
    WorkloadSpecError,
    check_pod_spec,
    cluster_provider,
    off_preemptible,
    on_preemptible,
    pod_template,
)
from together_worker import job as worker_job

NOT_PREEMPTIBLE = {"key": COMPUTE_CLASS_LABEL, "operator": "NotIn", "values": ["preemptible"]}
CONTAINER = {"name": "c", "image": "busybox"}


class Recorder(pulumi.runtime.Mocks):
    """Echoes inputs as outputs and keeps every registered resource's type, name and inputs."""

    def __init__(self) -> None:
        self.resources: list[tuple[str, str, dict[str, Any]]] = []

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        self.resources.append((args.typ, args.name, dict(args.inputs)))
        return f"{args.name}-id", dict(args.inputs)

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], None]:
        return {}, None

    def of_type(self, typ: str) -> list[dict[str, Any]]:
        return [inputs for t, _, inputs in self.resources if t == typ]


@pytest.fixture
def mocks() -> Iterator[Recorder]:
    recorder = Recorder()
    pulumi.runtime.set_mocks(recorder, preview=True)
    yield recorder


def _cluster(preemptible_gpus: int = 16) -> Cluster:
    return Cluster("train", ClusterArgs(**CLUSTER_SPEC, num_preemptible_gpus=preemptible_gpus))


def _llm(
    name: str, replicas: int, compute_class: ComputeClass, cluster: Cluster, **args: Any
) -> ServingReplicas:
    """`replicas` replicas of the `llm:1` image on `compute_class` nodes of `cluster`."""
    return ServingReplicas(
        name,
        ServingReplicasArgs(
            image="llm:1", replicas=replicas, compute_class=compute_class, cluster=cluster, **args
        ),
    )


def _settled(*outputs: pulumi.Output[Any]) -> pulumi.Output[Any]:
    """Resolves once every resource registered so far has been seen by the mocks."""
    return pulumi.Output.all(*outputs)


# Placement: plain dicts in, plain dicts out.


def test_on_preemptible_adds_a_node_selector_and_keeps_others() -> None:
    spec = on_preemptible({"nodeSelector": {"gpu": "h100"}, "containers": [CONTAINER]})
    assert spec["nodeSelector"] == {"gpu": "h100", COMPUTE_CLASS_LABEL: "preemptible"}
    assert "tolerations" not in spec  # Together documents a label, not a taint


def test_off_preemptible_adds_not_in_affinity() -> None:
    spec = off_preemptible({"containers": [CONTAINER]})
    required = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert required["nodeSelectorTerms"] == [{"matchExpressions": [NOT_PREEMPTIBLE]}]


def test_off_preemptible_constrains_every_ored_term() -> None:
    zone = {"key": "zone", "operator": "In", "values": ["a"]}
    rack = {"key": "rack", "operator": "In", "values": ["r1"]}
    existing = {"matchExpressions": [zone]}, {"matchExpressions": [rack]}
    spec = off_preemptible(
        {
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": list(existing)
                    }
                }
            }
        }
    )
    terms = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert terms["nodeSelectorTerms"] == [
        {"matchExpressions": [zone, NOT_PREEMPTIBLE]},
        {"matchExpressions": [rack, NOT_PREEMPTIBLE]},
    ]
    assert existing[0] == {"matchExpressions": [zone]}  # the caller's spec is not mutated


def test_pod_template_labels_pods_with_the_compute_class_they_need() -> None:
    template = pod_template("burst", ComputeClass.PREEMPTIBLE, {"containers": [CONTAINER]})
    assert template["metadata"]["labels"] == {COMPUTE_CLASS_LABEL: "preemptible"}
    standard = pod_template("serve", ComputeClass.STANDARD, {}, {"app": "llm"})
    assert standard["metadata"]["labels"] == {"app": "llm", COMPUTE_CLASS_LABEL: "standard"}
    assert "annotations" not in standard["metadata"]


def test_pod_template_puts_annotations_on_every_pod() -> None:
    template = pod_template("sweep", ComputeClass.PREEMPTIBLE, {}, None, {"run": "600"})
    assert template["metadata"]["annotations"] == {"run": "600"}


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (on_preemptible({}), ComputeClass.PREEMPTIBLE),
        (off_preemptible({}), ComputeClass.STANDARD),
        ({"nodeSelector": {COMPUTE_CLASS_LABEL: "standard"}}, ComputeClass.STANDARD),
        ({}, None),
    ],
)
def test_check_pod_spec_reports_the_class_a_spec_needs(
    spec: dict[str, Any], expected: ComputeClass | None
) -> None:
    assert check_pod_spec("w", spec) == expected


# Validation: every error names the workload, the field, the value, the rule and the fix.


def test_requiring_and_forbidding_preemptible_nodes_is_an_error() -> None:
    with pytest.raises(WorkloadSpecError) as raised:
        check_pod_spec("sweep", off_preemptible(on_preemptible({})))
    message = str(raised.value)
    assert "workload 'sweep'" in message
    assert f"nodeSelector {COMPUTE_CLASS_LABEL}=preemptible requires preemptible" in message
    assert "NotIn [preemptible] forbids them" in message
    assert "fix: use on_preemptible()" in message


def test_grace_period_past_the_drain_window_is_an_error_on_preemptible_nodes() -> None:
    with pytest.raises(WorkloadSpecError) as raised:
        pod_template("sweep", ComputeClass.PREEMPTIBLE, {"terminationGracePeriodSeconds": 600})
    error = raised.value
    assert error.field == "terminationGracePeriodSeconds"
    assert error.resource == "sweep"
    assert "terminationGracePeriodSeconds=600" in str(error)
    assert "300 s drain window" in str(error)
    assert "fix: set terminationGracePeriodSeconds <= 300" in str(error)


def test_grace_period_is_checked_for_pods_that_may_land_on_preemptible_nodes() -> None:
    with pytest.raises(WorkloadSpecError, match="terminationGracePeriodSeconds=301"):
        check_pod_spec("anywhere", {"terminationGracePeriodSeconds": 301})


def test_standard_pods_may_take_longer_than_the_drain_window() -> None:
    template = pod_template("serve", ComputeClass.STANDARD, {"terminationGracePeriodSeconds": 900})
    assert template["spec"]["terminationGracePeriodSeconds"] == 900


def test_the_full_drain_window_is_allowed() -> None:
    spec = on_preemptible({"terminationGracePeriodSeconds": 300})
    assert check_pod_spec("sweep", spec) is ComputeClass.PREEMPTIBLE


# Components through the mocks.


@pulumi.runtime.test
def test_worker_job_requeues_reclaimed_pods(mocks: Recorder) -> pulumi.Output[Any]:
    cluster = _cluster()
    worker = CheckpointingWorker(
        "sweep",
        CheckpointingWorkerArgs(
            image="trainer:1", command=["python", "train.py"], completions=8, parallelism=4,
            cluster=cluster, resources={"limits": {"nvidia.com/gpu": 1}},
        ),
    )  # fmt: skip

    def check(_: Any) -> None:
        (job,) = mocks.of_type("kubernetes:batch/v1:Job")
        spec = job["spec"]
        assert_checkpointing_job_spec(spec, completions=8, parallelism=4)
        pod = spec["template"]["spec"]
        assert pod["restartPolicy"] == "Never"
        assert pod["terminationGracePeriodSeconds"] == 300
        assert pod["nodeSelector"] == {COMPUTE_CLASS_LABEL: "preemptible"}
        assert spec["template"]["metadata"]["labels"][COMPUTE_CLASS_LABEL] == "preemptible"
        (container,) = pod["containers"]
        env = {e["name"]: e.get("value") for e in container["env"]}
        assert env["CHECKPOINT_DIR"] == "/checkpoints"
        assert env["DRAIN_WINDOW_SECONDS"] == "300"
        assert container["volumeMounts"] == [{"name": "checkpoints", "mountPath": "/checkpoints"}]
        assert pod["volumes"][0]["persistentVolumeClaim"] == {"claimName": "sweep-checkpoints"}
        assert job["metadata"]["annotations"] == {"pulumi.com/skipAwait": "true"}
        (claim,) = mocks.of_type("kubernetes:core/v1:PersistentVolumeClaim")
        assert claim["spec"]["accessModes"] == ["ReadWriteMany"]
        assert not mocks.of_type("kubernetes:policy/v1:PodDisruptionBudget")

    return _settled(worker.job.id).apply(check)


@pulumi.runtime.test
def test_worker_uses_an_existing_checkpoint_claim(mocks: Recorder) -> pulumi.Output[Any]:
    worker = CheckpointingWorker(
        "sweep",
        CheckpointingWorkerArgs(
            image="t", command=["t"], completions=1, parallelism=1, cluster=_cluster(),
            checkpoint_claim_name="shared", pre_stop_command=["touch", "/checkpoints/.stop"],
            pod_annotations={"together-sim/run-seconds": "600"},
            wait_for_completion=True,
        ),
    )  # fmt: skip

    def check(_: Any) -> None:
        (job,) = mocks.of_type("kubernetes:batch/v1:Job")
        pod = job["spec"]["template"]["spec"]
        assert pod["volumes"][0]["persistentVolumeClaim"] == {"claimName": "shared"}
        assert pod["containers"][0]["lifecycle"] == {
            "preStop": {"exec": {"command": ["touch", "/checkpoints/.stop"]}}
        }
        assert "annotations" not in job["metadata"]
        assert job["spec"]["template"]["metadata"]["annotations"] == {
            "together-sim/run-seconds": "600"
        }
        assert not mocks.of_type("kubernetes:core/v1:PersistentVolumeClaim")

    return _settled(worker.job.id).apply(check)


@pulumi.runtime.test
def test_the_drill_runs_the_job_checkpointing_worker_makes(mocks: Recorder) -> pulumi.Output[Any]:
    """`python -m together_drill --image --command` builds its Job with CheckpointingWorker's
    own functions (together_worker.job): the same spec, but for images the drill never pulls."""
    command = ["python", "-m", "together_worker", "run", "--", "python", "train.py"]
    worker = CheckpointingWorker(
        "drill",
        CheckpointingWorkerArgs(
            image="trainer:1", command=command, completions=1, parallelism=1, cluster=_cluster(),
            checkpoint_claim_name=drill_manifest.CLAIM_NAME,
        ),
    )  # fmt: skip
    assert CheckpointingWorkerArgs.backoff_limit == drill_manifest.BACKOFF_LIMIT

    def check(_: Any) -> None:
        (job,) = mocks.of_type("kubernetes:batch/v1:Job")
        drilled = drill_manifest.checkpointing_job("trainer:1", command).manifest["spec"]
        for container in drilled["template"]["spec"]["containers"]:
            assert container.pop("imagePullPolicy") == "Never"
        assert drilled == job["spec"]

    return _settled(worker.job.id).apply(check)


def test_the_worker_library_places_pods_as_the_provider_does() -> None:
    spec = {"containers": [{"name": "w"}], "nodeSelector": {"disk": "ssd"}}
    labels, annotations = {"app": "x"}, {"a": "b"}
    assert worker_job.preemptible_template(spec, labels, annotations) == pod_template(
        "x", ComputeClass.PREEMPTIBLE, spec, labels, annotations
    )
    assert worker_job.COMPUTE_CLASS_LABEL == COMPUTE_CLASS_LABEL


def test_worker_rejects_a_drain_longer_than_the_window(mocks: Recorder) -> None:
    args = CheckpointingWorkerArgs(
        image="t", command=["t"], completions=1, parallelism=1, cluster=_cluster(),
        drain_seconds=900,
    )  # fmt: skip
    with pytest.raises(WorkloadSpecError, match="terminationGracePeriodSeconds=900"):
        CheckpointingWorker("sweep", args)


@pulumi.runtime.test
def test_standard_serving_replicas_get_a_disruption_budget(mocks: Recorder) -> pulumi.Output[Any]:
    cluster = _cluster()
    serve = _llm("serve", 3, ComputeClass.STANDARD, cluster, app="llm")
    burst = _llm("burst", 4, ComputeClass.PREEMPTIBLE, cluster, app="llm")

    def check(_: Any) -> None:
        deployments = {
            d["metadata"]["name"]: d for d in mocks.of_type("kubernetes:apps/v1:Deployment")
        }
        serve_pod = deployments["serve"]["spec"]["template"]["spec"]
        assert serve_pod["affinity"]["nodeAffinity"][
            "requiredDuringSchedulingIgnoredDuringExecution"
        ] == {"nodeSelectorTerms": [{"matchExpressions": [NOT_PREEMPTIBLE]}]}
        assert "nodeSelector" not in serve_pod
        burst_pod = deployments["burst"]["spec"]["template"]["spec"]
        assert burst_pod["nodeSelector"] == {COMPUTE_CLASS_LABEL: "preemptible"}
        # `pulumi up` waits for the standard replicas, never for preemptible capacity.
        assert "annotations" not in deployments["serve"]["metadata"]
        assert deployments["burst"]["metadata"]["annotations"] == {"pulumi.com/skipAwait": "true"}
        (pdb,) = mocks.of_type("kubernetes:policy/v1:PodDisruptionBudget")
        assert pdb["metadata"]["name"] == "serve"
        assert pdb["spec"]["maxUnavailable"] == 1
        assert pdb["spec"]["selector"] == deployments["serve"]["spec"]["selector"]

    return _settled(serve.deployment.id, burst.deployment.id).apply(check)


@pytest.mark.parametrize(("target", "warned"), [(0, True), (16, False)])
def test_preemptible_workload_on_a_zero_target_cluster_warns(
    mocks: Recorder, mocker: MockerFixture, target: int, warned: bool
) -> None:
    warn = mocker.patch("pulumi.log.warn")

    @pulumi.runtime.test
    def program() -> pulumi.Output[Any]:
        cluster = _cluster(preemptible_gpus=target)
        burst = _llm("burst", 2, ComputeClass.PREEMPTIBLE, cluster)
        return _settled(burst.deployment.id, cluster.num_preemptible_gpus)

    program()
    messages = [call.args[0] for call in warn.call_args_list]
    matching = [m for m in messages if "preemptible target of 0" in m]
    assert bool(matching) is warned
    if warned:
        assert "workload 'burst'" in matching[0]
        assert "cluster 'train'" in matching[0]


@pulumi.runtime.test
def test_render_mode_provider_gets_no_kubeconfig(
    mocks: Recorder, monkeypatch: pytest.MonkeyPatch
) -> pulumi.Output[Any]:
    monkeypatch.setenv("KUBECONFIG", "/home/me/.kube/config")
    provider = cluster_provider("k8s", _cluster(), render_yaml_to_directory="/tmp/out")

    def check(_: Any) -> None:
        (inputs,) = mocks.of_type("pulumi:providers:kubernetes")
        assert inputs["renderYamlToDirectory"] == "/tmp/out"
        assert inputs["kubeconfig"] == ""  # not the SDK's fallback, $KUBECONFIG

    return _settled(provider.id).apply(check)


@pulumi.runtime.test
def test_cluster_mode_provider_gets_the_kubeconfig(mocks: Recorder) -> pulumi.Output[Any]:
    provider = cluster_provider("k8s", _cluster())

    def check(_: Any) -> None:
        (inputs,) = mocks.of_type("pulumi:providers:kubernetes")
        assert "kubeconfig" in inputs
        assert "renderYamlToDirectory" not in inputs

    return _settled(provider.id).apply(check)
