"""The `Cluster` resource a Pulumi program declares: typed inputs in, typed outputs out."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import pulumi
from pulumi.dynamic import Resource

from together_provider.cluster.provider import ClusterProvider
from together_provider.cluster.table import CLUSTER, CLUSTER_TYPE, TYPE_MODULE, TYPE_NAME

__all__ = ["CLUSTER_TYPE", "Cluster", "ClusterArgs"]


@dataclass
class ClusterArgs:
    """A Together GPU cluster: `num_gpus` standard GPUs plus a preemptible target.

    The typed mirror of the field table (`cluster.table.ClusterSpec`), for editors and type
    checkers; a unit test fails when the two differ, so the table stays the one declaration.

    `num_gpus` counts standard GPUs (never preempted; at least one 8-GPU node).
    `num_preemptible_gpus` is a *target* Together fills asynchronously at 50% of the on-demand
    price; the `allocated_preemptible_gpus` output says how much of it is live. With
    `max_preemptible_gpus` it is the floor of a range the live target may move in without a diff.
    """

    region: pulumi.Input[str]
    gpu_type: pulumi.Input[str]
    num_gpus: pulumi.Input[int]
    cuda_version: pulumi.Input[str]
    nvidia_driver_version: pulumi.Input[str]
    num_preemptible_gpus: pulumi.Input[int] = 0
    max_preemptible_gpus: pulumi.Input[int] | None = None
    cluster_name: pulumi.Input[str] | None = None
    cluster_type: pulumi.Input[str] = "KUBERNETES"
    billing_type: pulumi.Input[str] = "ON_DEMAND"
    duration_days: pulumi.Input[int] | None = None
    auto_scale: pulumi.Input[bool] = False
    auto_scale_max_gpus: pulumi.Input[int] | None = None
    project_id: pulumi.Input[str] | None = None
    volume_id: pulumi.Input[str] | None = None
    volume_region: pulumi.Input[str] | None = None
    ready_timeout_seconds: pulumi.Input[float] = 1800
    adopt_cluster_id: pulumi.Input[str] | None = None

    @property
    def has_volume(self) -> bool:
        """Declared with a shared volume: known when the program runs, even while the volume's
        id is not. Both hosts' `Cluster.has_volume`, which the workload helpers read."""
        return self.volume_id is not None


class Cluster(Resource, module=TYPE_MODULE, name=TYPE_NAME):
    """A Together GPU cluster (`pulumi-python:dynamic/together:Cluster`).

    Changing `num_gpus` or `num_preemptible_gpus` updates it in place; changing what the cluster
    *is* (name, region, GPU type, cluster type, billing, drivers, project, volume) replaces it.
    Pulumi's `custom_timeouts` does not reach dynamic providers: use `ready_timeout_seconds`.
    """

    cluster_name: pulumi.Output[str]
    region: pulumi.Output[str]
    gpu_type: pulumi.Output[str]
    num_gpus: pulumi.Output[int]
    num_preemptible_gpus: pulumi.Output[int]
    max_preemptible_gpus: pulumi.Output[int | None]
    auto_scale: pulumi.Output[bool]
    auto_scale_max_gpus: pulumi.Output[int | None]
    cluster_type: pulumi.Output[str]
    billing_type: pulumi.Output[str]
    cluster_id: pulumi.Output[str]
    status: pulumi.Output[str]
    desired_preemptible_gpus: pulumi.Output[int]
    allocated_preemptible_gpus: pulumi.Output[int]
    kube_config: pulumi.Output[str]
    control_plane_ready: pulumi.Output[bool]
    created_at: pulumi.Output[str]
    volume_name: pulumi.Output[str]
    preemption_events: pulumi.Output[list[dict[str, str]]]
    has_volume: bool

    def __init__(
        self,
        resource_name: str,
        args: ClusterArgs,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        # Not dataclasses.asdict: it deep-copies, and Outputs must be passed through untouched.
        # Unset inputs stay (the SDK sends no None), so each is an output resolving to None:
        # the autoscaler reads `max_preemptible_gpus` whether or not the program set it.
        props: dict[str, Any] = {f.name: getattr(args, f.name) for f in fields(args)}
        if props["cluster_name"] is None:
            props["cluster_name"] = resource_name
        props.update(dict.fromkeys(CLUSTER.output_names))
        secret = pulumi.ResourceOptions(additional_secret_outputs=list(CLUSTER.secret_outputs))
        super().__init__(
            ClusterProvider(),
            resource_name,
            props,
            pulumi.ResourceOptions.merge(secret, opts),
        )
        # Workloads mount the volume's PersistentVolume only on a cluster declared with one.
        self.has_volume = args.has_volume
