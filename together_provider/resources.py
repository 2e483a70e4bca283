# Generated from the field tables by `make sdk-python` (python -m together_provider.codegen
# --write): do not edit; tests/unit/test_codegen.py fails while this file differs.
"""The typed Args and dynamic-host resources of every kind, from its field table."""

from dataclasses import dataclass
from typing import Any

import pulumi

from together_provider import registry
from together_provider.hosts.resource import Attributes, DynamicResource

__all__ = [
    "Cluster",
    "ClusterArgs",
    "SharedVolume",
    "SharedVolumeArgs",
]


@dataclass
class ClusterArgs:
    """A Together GPU cluster: `num_gpus` standard GPUs (never preempted; at least one 8-GPU node)
    plus a preemptible target, `num_preemptible_gpus`, that Together fills asynchronously at 50% of
    the on-demand price (`allocated_preemptible_gpus` says how much of it is live). Changing either
    count updates it in place; changing what the cluster *is* (name, region, GPU type, cluster type,
    billing, drivers, project, volume) replaces it (docs/reference.md).

    The typed inputs of `together_provider.cluster.table`, one field per table entry.
    """

    region: pulumi.Input[str]
    """Together region, e.g. `us-central-8`."""

    gpu_type: pulumi.Input[str]
    """GPU model of every node."""

    num_gpus: pulumi.Input[int]
    """Standard GPUs (never preempted); at least one 8-GPU node, in multiples of 8. With
    `auto_scale`, the floor: Together's autoscaler may move the live count anywhere up to
    `auto_scale_max_gpus` without a diff.
    """

    cluster_name: pulumi.Input[str] | None = None
    """The cluster's name in Together; defaults to the resource name (the config key)."""

    cuda_version: pulumi.Input[str] | None = None
    """CUDA version of the node images (the SDK's legacy selector, with `nvidia_driver_version`); or
    name the pair by `nvidia_version_id`.
    """

    nvidia_driver_version: pulumi.Input[str] | None = None
    """NVIDIA driver version of the node images (with `cuda_version`)."""

    nvidia_version_id: pulumi.Input[str] | None = None
    """The CUDA + driver pair by its id in the region's catalogue (`tg beta clusters list-regions`);
    instead of `cuda_version` and `nvidia_driver_version`.
    """

    num_preemptible_gpus: pulumi.Input[int] = 0
    """Preemptible *target* at 50% of the on-demand price, in multiples of 8; see the
    `allocated_preemptible_gpus` output for what is live.
    """

    max_preemptible_gpus: pulumi.Input[int] | None = None
    """Ceiling of a declared preemptible range, in multiples of 8, at least `num_preemptible_gpus`
    (then the floor). Something else (an autoscaler, `tg beta clusters update`) may move the live
    target anywhere in [floor, ceiling] without a diff; a live target outside is brought back to the
    nearest bound in place. Unset: the target is held at `num_preemptible_gpus`.
    """

    cluster_type: pulumi.Input[str] = "KUBERNETES"
    """`KUBERNETES` or `SLURM`."""

    billing_type: pulumi.Input[str] = "ON_DEMAND"
    """How the standard GPUs are billed."""

    duration_days: pulumi.Input[int] | None = None
    """Length of a `RESERVED` cluster, 1..90 days."""

    auto_scale: pulumi.Input[bool] = False
    """Together's own autoscaling (Kubernetes Cluster Autoscaler) of the *standard* nodes, between
    `num_gpus` and `auto_scale_max_gpus`; capacity beyond a reservation is billed on demand.
    """

    auto_scale_max_gpus: pulumi.Input[int] | None = None
    """Ceiling of Together's autoscaling, in multiples of 8, at least `num_gpus`; set with
    `auto_scale`.
    """

    project_id: pulumi.Input[str] | None = None
    """Together project; required for a preemptible target."""

    volume_id: pulumi.Input[str] | None = None
    """Shared volume to attach at create, e.g. a `SharedVolume`'s `volume_id`."""

    volume_region: pulumi.Input[str] | None = None
    """The attached volume's region (a `SharedVolume`'s `region`); Together's volume object has
    none, so the cluster learns it here.
    """

    num_reserved_gpus: pulumi.Input[int] | None = None
    """Prepaid reserved GPUs of a `RESERVED` cluster, in multiples of 8; Together defaults it to
    `num_gpus`.
    """

    reservation_start_time: pulumi.Input[str] | None = None
    """When a `SCHEDULED_CAPACITY` reservation starts (ISO 8601, e.g. `2027-01-01T00:00:00Z`);
    unset, the cluster provisions at once.
    """

    reservation_end_time: pulumi.Input[str] | None = None
    """When the reservation ends and Together decommissions the cluster (ISO 8601, e.g.
    `2027-01-31T00:00:00Z`); `RESERVED` or `SCHEDULED_CAPACITY` clusters only. A later value extends
    it in place.
    """

    capacity_pool_id: pulumi.Input[str] | None = None
    """The capacity pool the cluster draws GPUs from."""

    num_capacity_pool_gpus: pulumi.Input[int] | None = None
    """GPUs drawn from `capacity_pool_id`, in multiples of 8, at most `num_gpus`."""

    add_ons: pulumi.Input[list[dict[str, Any]]] | None = None
    """Add-ons, each `{name, add_on_type, config}` with the SDK's keys; `config` takes `dashboard`,
    `headlamp`, `ingress` and `slurm_web`, each `{enabled}`.
    """

    cluster_config: pulumi.Input[dict[str, Any]] | None = None
    """Cluster settings with the SDK's keys: `load_balancer` (required: NONE, TRAEFIK, NGINX or
    ISTIO), `ingress` and `observability` (`{enabled}`), `gpu_operator_version`,
    `network_operator_version`, `jumphost_enabled`, `kubernetes_dashboard_enabled`,
    `ssh_ca_enabled`, `slurm_startup_scripts`.
    """

    install_traefik: pulumi.Input[bool] | None = None
    """Install the Traefik ingress controller (Kubernetes clusters; Together's default: false)."""

    oidc_config: pulumi.Input[dict[str, Any]] | None = None
    """OIDC for the Kubernetes API with the SDK's keys: `client_id`, `issuer_url`, `username_claim`,
    `username_prefix`, `group_claim`, `group_prefix` (required) and `ca_cert`.
    """

    acceptance_tests_params: pulumi.Input[dict[str, Any]] | None = None
    """GPU acceptance tests at bring-up, with the SDK's keys: `enabled`, `dcgm_diag_level`,
    `dcgm_diag_skipped`, `gpu_burn_duration`, `gpu_burn_skipped`, `nccl_single_node_skipped`,
    `nccl_multi_node_skipped`, `storage_skipped`.
    """

    slurm_image: pulumi.Input[str] | None = None
    """A custom Slurm image (SLURM clusters)."""

    slurm_shm_size_gib: pulumi.Input[int] | None = None
    """Shared memory of a SLURM cluster, in GiB."""

    ready_timeout_seconds: pulumi.Input[float] = 1800.0
    """How long create and standard-count updates wait for Ready, and delete for the cluster to be
    gone (Pulumi's customTimeouts do not reach dynamic providers).
    """

    adopt_cluster_id: pulumi.Input[str] | None = None
    """Take over this existing cluster at create instead of creating one."""

    @property
    def has_volume(self) -> bool:
        """Whether `volume_id` is set: known in the program, even while its value is not."""
        return self.volume_id is not None


class ClusterAttributes(Attributes):
    """The typed attributes of a `Cluster` on either host: every input and output of its table, with
    its doc.
    """

    cluster_name: pulumi.Output[str]
    """The cluster's name in Together; defaults to the resource name (the config key)."""

    region: pulumi.Output[str]
    """Together region, e.g. `us-central-8`."""

    gpu_type: pulumi.Output[str]
    """GPU model of every node."""

    num_gpus: pulumi.Output[int]
    """Standard GPUs (never preempted); at least one 8-GPU node, in multiples of 8. With
    `auto_scale`, the floor: Together's autoscaler may move the live count anywhere up to
    `auto_scale_max_gpus` without a diff.
    """

    cuda_version: pulumi.Output[str | None]
    """CUDA version of the node images (the SDK's legacy selector, with `nvidia_driver_version`); or
    name the pair by `nvidia_version_id`.
    """

    nvidia_driver_version: pulumi.Output[str | None]
    """NVIDIA driver version of the node images (with `cuda_version`)."""

    nvidia_version_id: pulumi.Output[str | None]
    """The CUDA + driver pair by its id in the region's catalogue (`tg beta clusters list-regions`);
    instead of `cuda_version` and `nvidia_driver_version`.
    """

    num_preemptible_gpus: pulumi.Output[int]
    """Preemptible *target* at 50% of the on-demand price, in multiples of 8; see the
    `allocated_preemptible_gpus` output for what is live.
    """

    max_preemptible_gpus: pulumi.Output[int | None]
    """Ceiling of a declared preemptible range, in multiples of 8, at least `num_preemptible_gpus`
    (then the floor). Something else (an autoscaler, `tg beta clusters update`) may move the live
    target anywhere in [floor, ceiling] without a diff; a live target outside is brought back to the
    nearest bound in place. Unset: the target is held at `num_preemptible_gpus`.
    """

    cluster_type: pulumi.Output[str]
    """`KUBERNETES` or `SLURM`."""

    billing_type: pulumi.Output[str]
    """How the standard GPUs are billed."""

    duration_days: pulumi.Output[int | None]
    """Length of a `RESERVED` cluster, 1..90 days."""

    auto_scale: pulumi.Output[bool]
    """Together's own autoscaling (Kubernetes Cluster Autoscaler) of the *standard* nodes, between
    `num_gpus` and `auto_scale_max_gpus`; capacity beyond a reservation is billed on demand.
    """

    auto_scale_max_gpus: pulumi.Output[int | None]
    """Ceiling of Together's autoscaling, in multiples of 8, at least `num_gpus`; set with
    `auto_scale`.
    """

    project_id: pulumi.Output[str | None]
    """Together project; required for a preemptible target."""

    volume_id: pulumi.Output[str | None]
    """Shared volume to attach at create, e.g. a `SharedVolume`'s `volume_id`."""

    volume_region: pulumi.Output[str | None]
    """The attached volume's region (a `SharedVolume`'s `region`); Together's volume object has
    none, so the cluster learns it here.
    """

    num_reserved_gpus: pulumi.Output[int | None]
    """Prepaid reserved GPUs of a `RESERVED` cluster, in multiples of 8; Together defaults it to
    `num_gpus`.
    """

    reservation_start_time: pulumi.Output[str | None]
    """When a `SCHEDULED_CAPACITY` reservation starts (ISO 8601, e.g. `2027-01-01T00:00:00Z`);
    unset, the cluster provisions at once.
    """

    reservation_end_time: pulumi.Output[str | None]
    """When the reservation ends and Together decommissions the cluster (ISO 8601, e.g.
    `2027-01-31T00:00:00Z`); `RESERVED` or `SCHEDULED_CAPACITY` clusters only. A later value extends
    it in place.
    """

    capacity_pool_id: pulumi.Output[str | None]
    """The capacity pool the cluster draws GPUs from."""

    num_capacity_pool_gpus: pulumi.Output[int | None]
    """GPUs drawn from `capacity_pool_id`, in multiples of 8, at most `num_gpus`."""

    add_ons: pulumi.Output[list[dict[str, Any]] | None]
    """Add-ons, each `{name, add_on_type, config}` with the SDK's keys; `config` takes `dashboard`,
    `headlamp`, `ingress` and `slurm_web`, each `{enabled}`.
    """

    cluster_config: pulumi.Output[dict[str, Any] | None]
    """Cluster settings with the SDK's keys: `load_balancer` (required: NONE, TRAEFIK, NGINX or
    ISTIO), `ingress` and `observability` (`{enabled}`), `gpu_operator_version`,
    `network_operator_version`, `jumphost_enabled`, `kubernetes_dashboard_enabled`,
    `ssh_ca_enabled`, `slurm_startup_scripts`.
    """

    install_traefik: pulumi.Output[bool | None]
    """Install the Traefik ingress controller (Kubernetes clusters; Together's default: false)."""

    oidc_config: pulumi.Output[dict[str, Any] | None]
    """OIDC for the Kubernetes API with the SDK's keys: `client_id`, `issuer_url`, `username_claim`,
    `username_prefix`, `group_claim`, `group_prefix` (required) and `ca_cert`.
    """

    acceptance_tests_params: pulumi.Output[dict[str, Any] | None]
    """GPU acceptance tests at bring-up, with the SDK's keys: `enabled`, `dcgm_diag_level`,
    `dcgm_diag_skipped`, `gpu_burn_duration`, `gpu_burn_skipped`, `nccl_single_node_skipped`,
    `nccl_multi_node_skipped`, `storage_skipped`.
    """

    slurm_image: pulumi.Output[str | None]
    """A custom Slurm image (SLURM clusters)."""

    slurm_shm_size_gib: pulumi.Output[int | None]
    """Shared memory of a SLURM cluster, in GiB."""

    ready_timeout_seconds: pulumi.Output[float]
    """How long create and standard-count updates wait for Ready, and delete for the cluster to be
    gone (Pulumi's customTimeouts do not reach dynamic providers).
    """

    adopt_cluster_id: pulumi.Output[str | None]
    """Take over this existing cluster at create instead of creating one."""

    cluster_id: pulumi.Output[str]
    """Together's id of the cluster."""

    status: pulumi.Output[str]
    """Together's status, e.g. `Ready`."""

    desired_preemptible_gpus: pulumi.Output[int]
    """The preemptible target as Together echoes it."""

    allocated_preemptible_gpus: pulumi.Output[int]
    """Preemptible GPUs live now; may stay below the target, and drops on a reclaim."""

    kube_config: pulumi.Output[str]
    """Kubeconfig of a Kubernetes cluster, as YAML."""

    control_plane_ready: pulumi.Output[bool]
    """The control plane answers."""

    created_at: pulumi.Output[str]
    """When Together created it (ISO 8601)."""

    volume_name: pulumi.Output[str]
    """The attached shared volume's name, which is also its PersistentVolume's name in the cluster's
    Kubernetes (empty without a volume).
    """

    preemption_events: pulumi.Output[list[dict[str, Any]]]
    """The last 20 reclaim notices, oldest first."""

    worker_nodes: pulumi.Output[list[dict[str, Any]]]
    """The GPU worker nodes live now, each `{node_id, host_name, compute_class, status, phase}`;
    `compute_class` is `standard` or `preemptible`.
    """

    first_ready_at: pulumi.Output[str | None]
    """When the cluster was first Ready (ISO 8601); unset until then."""

    add_on_states: pulumi.Output[list[dict[str, Any]] | None]
    """Each add-on's state as Together reports it, `{name, state}`; unset without add-ons."""

    reservation_ends_at: pulumi.Output[str | None]
    """When the reservation ends as Together reports it (ISO 8601, UTC); unset for a cluster with no
    end.
    """

    has_volume: bool
    """Whether `volume_id` is set."""


class Cluster(ClusterAttributes, DynamicResource, kind=registry.BY_NAME["Cluster"]):
    """A Together GPU cluster: `num_gpus` standard GPUs (never preempted; at least one 8-GPU node)
    plus a preemptible target, `num_preemptible_gpus`, that Together fills asynchronously at 50% of
    the on-demand price (`allocated_preemptible_gpus` says how much of it is live). Changing either
    count updates it in place; changing what the cluster *is* (name, region, GPU type, cluster type,
    billing, drivers, project, volume) replaces it (docs/reference.md).

    Served by the dynamic-provider host (`pulumi-python:dynamic/together:Cluster`); Pulumi's
    `custom_timeouts` do not reach it.
    """

    def __init__(
        self, resource_name: str, args: ClusterArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__(resource_name, args, opts)


@dataclass
class SharedVolumeArgs:
    """A Together shared volume of `size_tib` whole TiB in `region`, where preemptible nodes write
    checkpoints that outlive them; attach it with `ClusterArgs(volume_id=volume.volume_id,
    volume_region=volume.region)`. Growing `size_tib` is one in-place PUT; a shrink is rejected at
    preview; changing the name, region, project or lifecycle independence replaces it. Deleting it
    is refused while a live cluster uses it.

    The typed inputs of `together_provider.volume.table`, one field per table entry.
    """

    region: pulumi.Input[str]
    """Together region; a cluster can only attach a volume of its own region."""

    size_tib: pulumi.Input[int]
    """Size in whole TiB, at least 1."""

    volume_name: pulumi.Input[str] | None = None
    """The volume's name in Together (and of its PersistentVolume on the cluster); defaults to the
    resource name (the config key).
    """

    project_id: pulumi.Input[str] | None = None
    """Together project."""

    is_lifecycle_independent: pulumi.Input[bool] = True
    """Keep the volume when the last cluster using it is deleted. The default (true) lets the stack,
    not a cluster's deletion, decide when the checkpoints go; with false Together deletes it with
    its cluster, so replacing that cluster loses them.
    """

    instance_cluster_id: pulumi.Input[str] | None = None
    """A cluster whose infrastructure the volume is placed on (its `cluster_id`)."""

    ready_timeout_seconds: pulumi.Input[float] = 1800.0
    """How long create waits for the volume to be available (and delete for it to be gone)."""

    adopt_volume_id: pulumi.Input[str] | None = None
    """Take over this existing volume at create instead of creating one."""


class SharedVolumeAttributes(Attributes):
    """The typed attributes of a `SharedVolume` on either host: every input and output of its table,
    with its doc.
    """

    volume_name: pulumi.Output[str]
    """The volume's name in Together (and of its PersistentVolume on the cluster); defaults to the
    resource name (the config key).
    """

    region: pulumi.Output[str]
    """Together region; a cluster can only attach a volume of its own region."""

    size_tib: pulumi.Output[int]
    """Size in whole TiB, at least 1."""

    project_id: pulumi.Output[str | None]
    """Together project."""

    is_lifecycle_independent: pulumi.Output[bool]
    """Keep the volume when the last cluster using it is deleted. The default (true) lets the stack,
    not a cluster's deletion, decide when the checkpoints go; with false Together deletes it with
    its cluster, so replacing that cluster loses them.
    """

    instance_cluster_id: pulumi.Output[str | None]
    """A cluster whose infrastructure the volume is placed on (its `cluster_id`)."""

    ready_timeout_seconds: pulumi.Output[float]
    """How long create waits for the volume to be available (and delete for it to be gone)."""

    adopt_volume_id: pulumi.Output[str | None]
    """Take over this existing volume at create instead of creating one."""

    volume_id: pulumi.Output[str]
    """Together's id of the volume; pass it to `Cluster(volume_id=)`."""

    status: pulumi.Output[str]
    """Together's status, e.g. `available` or `bound`."""

    cluster_ids: pulumi.Output[list[str]]
    """The clusters that use the volume (from the clusters' own `volumes` lists)."""


class SharedVolume(SharedVolumeAttributes, DynamicResource, kind=registry.BY_NAME["SharedVolume"]):
    """A Together shared volume of `size_tib` whole TiB in `region`, where preemptible nodes write
    checkpoints that outlive them; attach it with `ClusterArgs(volume_id=volume.volume_id,
    volume_region=volume.region)`. Growing `size_tib` is one in-place PUT; a shrink is rejected at
    preview; changing the name, region, project or lifecycle independence replaces it. Deleting it
    is refused while a live cluster uses it.

    Served by the dynamic-provider host (`pulumi-python:dynamic/together:SharedVolume`); Pulumi's
    `custom_timeouts` do not reach it.
    """

    def __init__(
        self, resource_name: str, args: SharedVolumeArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__(resource_name, args, opts)
