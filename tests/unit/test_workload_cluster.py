"""Both hosts' `Cluster` is a `WorkloadCluster`, so every workload helper takes either one.

Checked twice: by mypy (`HOSTS` below builds each host's cluster as the protocol, so a host that
lacks a member, or types one differently, fails `make lint`), and here at run time through
pulumi.runtime mocks: each member is there, unset inputs included, and a `CheckpointingWorker`
on either host's cluster declared with a shared volume binds its claim to the volume's
PersistentVolume. Through the engine: the sweep rendered (tests/integration/
test_kubernetes_render.py) and applied (test_kubernetes_workloads.py) on each host.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pulumi
import pytest

import together_provider
from together_provider import ClusterArgs, native
from together_provider.kubernetes import (
    CheckpointingWorker,
    CheckpointingWorkerArgs,
    PreemptibleAutoscaler,
    PreemptibleAutoscalerArgs,
    WorkloadCluster,
    cluster_provider,
)

HOSTS: dict[str, Callable[[str, ClusterArgs], WorkloadCluster]] = {
    "dynamic": together_provider.Cluster,
    "native": native.Cluster,
}
VOLUME_NAME = "ckpt"


class Recorder(pulumi.runtime.Mocks):
    """Echoes inputs as outputs (a cluster also reports its volume's name, under either host's
    spelling; a Kubernetes object its name) and keeps every registered resource's type and
    inputs."""

    def __init__(self) -> None:
        self.resources: list[tuple[str, dict[str, Any]]] = []

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        self.resources.append((args.typ, dict(args.inputs)))
        outputs = dict(args.inputs)
        if "volume_id" in outputs or "volumeId" in outputs:
            outputs |= {"volume_name": VOLUME_NAME, "volumeName": VOLUME_NAME}
        if args.typ.startswith("kubernetes:"):  # the API server names what the program did not
            outputs["metadata"] = {"name": args.name, **outputs.get("metadata", {})}
        return f"{args.name}-id", outputs

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], None]:
        return {}, None

    def of_type(self, typ: str) -> list[dict[str, Any]]:
        return [inputs for t, inputs in self.resources if t == typ]


@pytest.fixture
def mocks(mocks_loop: object) -> Iterator[Recorder]:
    recorder = Recorder()
    pulumi.runtime.set_mocks(recorder, preview=False)
    yield recorder


def _cluster(host: str, volume_id: str | None, **more: Any) -> WorkloadCluster:
    args = ClusterArgs(
        region="us-central-8", gpu_type="H100_SXM", num_gpus=8, cuda_version="12.8",
        nvidia_driver_version="570", num_preemptible_gpus=8, volume_id=volume_id, **more,
    )  # fmt: skip
    return HOSTS[host]("train", args)


def _worker(cluster: WorkloadCluster) -> CheckpointingWorker:
    return CheckpointingWorker(
        "sweep",
        CheckpointingWorkerArgs(
            image="t", command=["t"], completions=2, parallelism=2, cluster=cluster
        ),
    )


@pytest.mark.parametrize("host", sorted(HOSTS))
@pulumi.runtime.test
def test_each_hosts_cluster_has_every_member_the_helpers_read(mocks: Recorder, host: str) -> None:
    """Unset inputs too (no `volume_id`, no `max_preemptible_gpus`): each is an Output."""
    cluster = _cluster(host, None)
    assert isinstance(cluster, WorkloadCluster)
    assert cluster.has_volume is False
    assert _cluster(host, "vol-1").has_volume is True
    members = vars(WorkloadCluster).items()
    outputs = [name for name, member in members if isinstance(member, property)]
    outputs.remove("has_volume")
    assert len(outputs) == 7
    for name in outputs:
        assert isinstance(getattr(cluster, name), pulumi.Output), name


@pytest.mark.parametrize("host", sorted(HOSTS))
@pulumi.runtime.test
def test_a_worker_binds_the_shared_volume_on_either_hosts_cluster(
    mocks: Recorder, host: str
) -> pulumi.Output[Any]:
    worker = _worker(_cluster(host, "vol-1"))

    def check(_: Any) -> None:
        (claim,) = mocks.of_type("kubernetes:core/v1:PersistentVolumeClaim")
        assert claim["spec"]["volumeName"] == VOLUME_NAME
        assert claim["spec"]["storageClassName"] == ""
        assert claim["metadata"]["annotations"] == {
            "pulumi.com/waitFor": "jsonpath={.status.phase}=Bound"
        }

    assert worker.checkpoint_claim is not None
    return pulumi.Output.all(worker.job.id, worker.checkpoint_claim.id).apply(check)


@pytest.mark.parametrize("host", sorted(HOSTS))
@pulumi.runtime.test
def test_a_worker_provisions_its_own_claim_on_a_cluster_without_a_volume(
    mocks: Recorder, host: str
) -> pulumi.Output[Any]:
    worker = _worker(_cluster(host, None))

    def check(_: Any) -> None:
        (claim,) = mocks.of_type("kubernetes:core/v1:PersistentVolumeClaim")
        assert "volumeName" not in claim["spec"]
        assert "storageClassName" not in claim["spec"]

    assert worker.checkpoint_claim is not None
    return pulumi.Output.all(worker.job.id, worker.checkpoint_claim.id).apply(check)


def _autoscaler(cluster: WorkloadCluster) -> PreemptibleAutoscaler:
    return PreemptibleAutoscaler(
        "burst",
        PreemptibleAutoscalerArgs(cluster=cluster, api_key="k", image="autoscaler:1"),
    )


def _command(mocks: Recorder) -> list[str]:
    (deployment,) = mocks.of_type("kubernetes:apps/v1:Deployment")
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    command: list[str] = container["command"]
    return command


@pytest.mark.parametrize("host", sorted(HOSTS))
def test_the_autoscaler_takes_its_ceiling_from_either_hosts_cluster(
    mocks: Recorder, host: str
) -> None:
    @pulumi.runtime.test
    def program() -> None:
        _autoscaler(_cluster(host, None, max_preemptible_gpus=24))

    program()  # returns once every resource is registered
    command = _command(mocks)
    assert command[command.index("--max-preemptible-gpus") + 1] == "24"


@pytest.mark.parametrize("host", sorted(HOSTS))
@pulumi.runtime.test
def test_an_unset_ceiling_resolves_to_none_on_either_host(
    mocks: Recorder, host: str
) -> pulumi.Output[Any]:
    """What lets the autoscaler refuse a cluster with no ceiling by name (`_no_ceiling`) instead
    of failing on a missing attribute."""

    def check(ceiling: Any) -> None:
        assert ceiling is None

    return _cluster(host, None).max_preemptible_gpus.apply(check)


class _Outputs:
    """Every member of the protocol, on something that is no Pulumi resource."""

    has_volume = False

    def __getattr__(self, name: str) -> pulumi.Output[Any]:
        return pulumi.Output.from_input("x")


def test_a_kubernetes_provider_needs_a_cluster_resource_to_depend_on() -> None:
    with pytest.raises(TypeError, match=r"cluster_provider\('k8s'\): .* is not a resource"):
        cluster_provider("k8s", _Outputs())
