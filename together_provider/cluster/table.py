"""The Cluster resource's field table: the one place a Cluster field is declared, so the specs,
policies, stack-config keys, outputs and docs cannot disagree (they derive from `CLUSTER`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from together_api.kubeconfig import decode_kube_config
from together_facts.values import BillingType, ClusterType, GpuType
from together_provider.cluster.shapes import (
    ACCEPTANCE_TESTS,
    ADD_ON,
    CLUSTER_CONFIG,
    OIDC_CONFIG,
    changed_add_ons,
)
from together_provider.framework import validators
from together_provider.framework.fields import adopt_id_field, ready_timeout_field
from together_provider.framework.fixes import PULUMI_FIXES
from together_provider.framework.schema import Policy, Schema, Span, input_field, output_field

if TYPE_CHECKING:  # the live object's type only; importing it would load pydantic in a preview
    from together_api.wire import Cluster

REPLACE, IN_PLACE, LOCAL = Policy.REPLACE, Policy.IN_PLACE, Policy.LOCAL
NOT_UPDATABLE: Final = "not in the update request"

TYPE_MODULE: Final = "together"
TYPE_NAME: Final = "Cluster"
CLUSTER_TYPE: Final = f"pulumi-python:dynamic/{TYPE_MODULE}:{TYPE_NAME}"
"""The resource type token in the state and in `pulumi preview --json` (what the PR comment and
the tests look for)."""

MAX_PREEMPTION_EVENTS: Final = 20
"""How many recent preemption events the `preemption_events` output keeps (newest last)."""


@dataclass(frozen=True)
class ClusterSpec:
    """The resolved inputs of one cluster: every value known, defaults applied."""

    cluster_name: str = input_field(
        REPLACE,
        "not in Together's update request",
        "The cluster's name in Together; defaults to the resource name (the config key).",
        example="'train'",
        live="cluster_name",
        names_resource=True,
        per_resource=True,
    )
    region: str = input_field(
        REPLACE,
        f"GPUs are provisioned in one region; {NOT_UPDATABLE}",
        "Together region, e.g. `us-central-8`.",
        example="'us-central-8'",
        live="region",
    )
    gpu_type: GpuType = input_field(
        REPLACE,
        f"nodes are built for one GPU type; {NOT_UPDATABLE}",
        "GPU model of every node.",
        example="'H100_SXM'",
        live="gpu_type",
    )
    num_gpus: int = input_field(
        IN_PLACE,
        "the standard GPU count scales in place (PUT num_gpus)",
        "Standard GPUs (never preempted); at least one 8-GPU node, in multiples of 8. With "
        "`auto_scale`, the floor: Together's autoscaler may move the live count anywhere up to "
        "`auto_scale_max_gpus` without a diff.",
        example="8",
        validator=validators.gpu_count,
        live="num_gpus",
        ceiling="auto_scale_max_gpus",
    )
    cuda_version: str | None = input_field(
        REPLACE,
        f"fixed when the node images are built; {NOT_UPDATABLE}",
        "CUDA version of the node images (the SDK's legacy selector, with "
        "`nvidia_driver_version`); or name the pair by `nvidia_version_id`.",
        default=None,
        example="'12.6'",
        live="cuda_version",
    )
    nvidia_driver_version: str | None = input_field(
        REPLACE,
        f"fixed when the node images are built; {NOT_UPDATABLE}",
        "NVIDIA driver version of the node images (with `cuda_version`).",
        default=None,
        example="'560'",
        live="nvidia_driver_version",
    )
    nvidia_version_id: str | None = input_field(
        REPLACE,
        f"fixed when the node images are built; {NOT_UPDATABLE}",
        "The CUDA + driver pair by its id in the region's catalogue "
        "(`tg beta clusters list-regions`); instead of `cuda_version` and "
        "`nvidia_driver_version`.",
        default=None,
    )
    num_preemptible_gpus: int = input_field(
        IN_PLACE,
        "the preemptible target changes in place (PUT num_preemptible_gpus); Together fills it "
        "asynchronously",
        "Preemptible *target* at 50% of the on-demand price, in multiples of 8; see the "
        "`allocated_preemptible_gpus` output for what is live.",
        default=0,
        validator=validators.gpu_count,
        live="desired_preemptible_gpus",
        omit_default=True,
        ceiling="max_preemptible_gpus",
    )
    max_preemptible_gpus: int | None = input_field(
        IN_PLACE,
        "provider-only (Together has no such field): it bounds the live target, so a change "
        "PUTs `num_preemptible_gpus` only when the live target falls outside the new range",
        "Ceiling of a declared preemptible range, in multiples of 8, at least "
        "`num_preemptible_gpus` (then the floor). Something else (an autoscaler, "
        "`tg beta clusters update`) may move the live target anywhere in [floor, ceiling] "
        "without a diff; a live target outside is brought back to the nearest bound in place. "
        "Unset: the target is held at `num_preemptible_gpus`.",
        default=None,
        validator=validators.gpu_count,
        wire=None,
    )
    cluster_type: ClusterType = input_field(
        REPLACE,
        "the API accepts it, but switching KUBERNETES/SLURM rebuilds the cluster",
        "`KUBERNETES` or `SLURM`.",
        default="KUBERNETES",
        live="cluster_type",
    )
    billing_type: BillingType = input_field(
        REPLACE,
        f"billing is fixed at create; {NOT_UPDATABLE}",
        "How the standard GPUs are billed.",
        default="ON_DEMAND",
        live="billing_type",
    )
    duration_days: int | None = input_field(
        REPLACE,
        "a reservation's length is fixed at create",
        "Length of a `RESERVED` cluster, 1..90 days.",
        default=None,
        validator=validators.days,
    )
    auto_scale: bool = input_field(
        REPLACE,
        f"Together's autoscaling is chosen at create; {NOT_UPDATABLE}",
        "Together's own autoscaling (Kubernetes Cluster Autoscaler) of the *standard* nodes, "
        "between `num_gpus` and `auto_scale_max_gpus`; capacity beyond a reservation is billed "
        "on demand.",
        default=False,
        omit_default=True,
    )
    auto_scale_max_gpus: int | None = input_field(
        REPLACE,
        f"the autoscaling ceiling is fixed at create; {NOT_UPDATABLE}",
        "Ceiling of Together's autoscaling, in multiples of 8, at least `num_gpus`; set with "
        "`auto_scale`.",
        default=None,
        validator=validators.gpu_count,
    )
    project_id: str | None = input_field(
        REPLACE,
        f"a cluster belongs to one project; {NOT_UPDATABLE}",
        "Together project; required for a preemptible target.",
        default=None,
        live="project_id",
    )
    volume_id: str | None = input_field(
        REPLACE,
        f"the shared volume is attached at create; {NOT_UPDATABLE}",
        "Shared volume to attach at create, e.g. a `SharedVolume`'s `volume_id`.",
        default=None,
        live="attached_volume_id",
    )
    volume_region: str | None = input_field(
        LOCAL,
        "never sent: only checked against `region`, so a volume of another region is rejected "
        "at preview",
        "The attached volume's region (a `SharedVolume`'s `region`); Together's volume object "
        "has none, so the cluster learns it here.",
        default=None,
        wire=None,
        config=False,
    )
    num_reserved_gpus: int | None = input_field(
        IN_PLACE,
        "grows or shrinks in place (PUT num_reserved_gpus)",
        "Prepaid reserved GPUs of a `RESERVED` cluster, in multiples of 8; Together defaults it "
        "to `num_gpus`.",
        default=None,
        validator=validators.gpu_count,
    )
    reservation_start_time: str | None = input_field(
        REPLACE,
        f"a reservation's start is fixed at create; {NOT_UPDATABLE}",
        "When a `SCHEDULED_CAPACITY` reservation starts (ISO 8601, e.g. "
        "`2027-01-01T00:00:00Z`); unset, the cluster provisions at once.",
        default=None,
        validator=validators.timestamp,
    )
    reservation_end_time: str | None = input_field(
        IN_PLACE,
        "a reservation is extended in place (PUT reservation_end_time); it never shortens",
        "When the reservation ends and Together decommissions the cluster (ISO 8601, e.g. "
        "`2027-01-31T00:00:00Z`); `RESERVED` or `SCHEDULED_CAPACITY` clusters only. A later "
        "value extends it in place.",
        default=None,
        validator=validators.timestamp,
    )
    capacity_pool_id: str | None = input_field(
        REPLACE,
        f"a cluster is drawn from one capacity pool at create; {NOT_UPDATABLE}",
        "The capacity pool the cluster draws GPUs from.",
        default=None,
    )
    num_capacity_pool_gpus: int | None = input_field(
        IN_PLACE,
        "changes in place (PUT num_capacity_pool_gpus)",
        "GPUs drawn from `capacity_pool_id`, in multiples of 8, at most `num_gpus`.",
        default=None,
        validator=validators.gpu_count,
    )
    add_ons: list[dict[str, Any]] | None = input_field(
        IN_PLACE,
        "an add-on's config changes in place (PUT add_ons with the changed add-ons only); "
        "adding or removing one is rejected (the update request names existing add-ons)",
        "Add-ons, each `{name, add_on_type, config}` with the SDK's keys; `config` takes "
        "`dashboard`, `headlamp`, `ingress` and `slurm_web`, each `{enabled}`.",
        default=None,
        validator=validators.records(ADD_ON, "name"),
        put=changed_add_ons,
    )
    cluster_config: dict[str, Any] | None = input_field(
        IN_PLACE,
        "changes in place (PUT cluster_config)",
        "Cluster settings with the SDK's keys: `load_balancer` (required: NONE, TRAEFIK, NGINX "
        "or ISTIO), `ingress` and `observability` (`{enabled}`), `gpu_operator_version`, "
        "`network_operator_version`, `jumphost_enabled`, `kubernetes_dashboard_enabled`, "
        "`ssh_ca_enabled`, `slurm_startup_scripts`.",
        default=None,
        validator=CLUSTER_CONFIG,
    )
    install_traefik: bool | None = input_field(
        REPLACE,
        f"installed at create; {NOT_UPDATABLE}",
        "Install the Traefik ingress controller (Kubernetes clusters; Together's default: false).",
        default=None,
    )
    oidc_config: dict[str, Any] | None = input_field(
        REPLACE,
        f"the API server's authentication is set at create; {NOT_UPDATABLE}",
        "OIDC for the Kubernetes API with the SDK's keys: `client_id`, `issuer_url`, "
        "`username_claim`, `username_prefix`, `group_claim`, `group_prefix` (required) and "
        "`ca_cert`.",
        default=None,
        validator=OIDC_CONFIG,
    )
    acceptance_tests_params: dict[str, Any] | None = input_field(
        REPLACE,
        f"the tests run once, at bring-up; {NOT_UPDATABLE}",
        "GPU acceptance tests at bring-up, with the SDK's keys: `enabled`, `dcgm_diag_level`, "
        "`dcgm_diag_skipped`, `gpu_burn_duration`, `gpu_burn_skipped`, "
        "`nccl_single_node_skipped`, `nccl_multi_node_skipped`, `storage_skipped`.",
        default=None,
        validator=ACCEPTANCE_TESTS,
    )
    slurm_image: str | None = input_field(
        REPLACE,
        f"the Slurm image is chosen at create; {NOT_UPDATABLE}",
        "A custom Slurm image (SLURM clusters).",
        default=None,
    )
    slurm_shm_size_gib: int | None = input_field(
        REPLACE,
        f"fixed at create; {NOT_UPDATABLE}",
        "Shared memory of a SLURM cluster, in GiB.",
        default=None,
        validator=validators.whole,
    )
    ready_timeout_seconds: float = ready_timeout_field(
        "only bounds how long the provider waits for readiness",
        "How long create and standard-count updates wait for Ready, and delete for the "
        "cluster to be gone (Pulumi's customTimeouts do not reach dynamic providers).",
    )
    adopt_cluster_id: str | None = adopt_id_field("cluster")


def _created_at(cluster: Cluster) -> str:
    return cluster.created_at.isoformat() if cluster.created_at else ""


def preemption_events(cluster: Cluster) -> list[dict[str, str]]:
    """Recent reclaim notices (both spellings Together uses), oldest first, capped."""
    events = [
        {
            "node_id": event.node_id,
            "reason": event.reason,
            "message": event.message,
            "timestamp": event.timestamp.isoformat(),
        }
        for event in cluster.node_lifecycle_events or []
        if event.is_preemption
    ]
    return events[-MAX_PREEMPTION_EVENTS:]


def _kube_config(cluster: Cluster) -> str:
    """Together sends base64 (its CLI decodes it); the output and pulumi-kubernetes get YAML."""
    return decode_kube_config(
        cluster.kube_config, cluster_id=cluster.cluster_id, hints=PULUMI_FIXES
    )


def _volume_name(cluster: Cluster) -> str:
    return cluster.volumes[0].volume_name if cluster.volumes else ""


def _control_plane_ready(cluster: Cluster) -> bool:
    return bool(cluster.control_plane_ready)


def worker_nodes(cluster: Cluster) -> list[dict[str, str]]:
    """The GPU nodes live now, each with its compute class and latest phase."""
    return [
        {
            "node_id": node.node_id,
            "host_name": node.host_name,
            "compute_class": "preemptible" if node.is_preemptible else "standard",
            "status": node.status,
            "phase": node.phase_transitions[-1].phase if node.phase_transitions else "",
        }
        for node in cluster.gpu_worker_nodes
    ]


def _first_ready_at(cluster: Cluster) -> str | None:
    return cluster.first_ready_at.isoformat() if cluster.first_ready_at else None


def _add_on_states(cluster: Cluster) -> list[dict[str, Any]] | None:
    """Each add-on's state as Together reports it; None (not stored) without add-ons."""
    return [{"name": a.name, "state": a.state} for a in cluster.add_ons] or None


def _reservation_ends_at(cluster: Cluster) -> str | None:
    end = cluster.reservation_end_time
    return validators.timestamp("reservation_end_time", end.isoformat()) if end else None


@dataclass(frozen=True)
class ClusterOutputs:
    """What the provider computes from the live cluster; every input is echoed beside these."""

    cluster_id: str = output_field("Together's id of the cluster.")
    status: str = output_field("Together's status, e.g. `Ready`.")
    desired_preemptible_gpus: int = output_field("The preemptible target as Together echoes it.")
    allocated_preemptible_gpus: int = output_field(
        "Preemptible GPUs live now; may stay below the target, and drops on a reclaim."
    )
    kube_config: str = output_field(
        "Kubeconfig of a Kubernetes cluster, as YAML.", secret=True, source=_kube_config
    )
    control_plane_ready: bool = output_field(
        "The control plane answers.", source=_control_plane_ready
    )
    created_at: str = output_field("When Together created it (ISO 8601).", source=_created_at)
    volume_name: str = output_field(
        "The attached shared volume's name, which is also its PersistentVolume's name in the "
        "cluster's Kubernetes (empty without a volume).",
        source=_volume_name,
    )
    preemption_events: list[dict[str, Any]] = output_field(
        f"The last {MAX_PREEMPTION_EVENTS} reclaim notices, oldest first.",
        source=preemption_events,
    )
    worker_nodes: list[dict[str, Any]] = output_field(
        "The GPU worker nodes live now, each `{node_id, host_name, compute_class, status, "
        "phase}`; `compute_class` is `standard` or `preemptible`.",
        source=worker_nodes,
    )
    first_ready_at: str | None = output_field(
        "When the cluster was first Ready (ISO 8601); unset until then.", source=_first_ready_at
    )
    add_on_states: list[dict[str, Any]] | None = output_field(
        "Each add-on's state as Together reports it, `{name, state}`; unset without add-ons.",
        source=_add_on_states,
    )
    reservation_ends_at: str | None = output_field(
        "When the reservation ends as Together reports it (ISO 8601, UTC); unset for a cluster "
        "with no end.",
        source=_reservation_ends_at,
    )


CLUSTER: Final = Schema("cluster", ClusterSpec, ClusterOutputs)
"""The Cluster schema every other module derives its view from (see
`together_provider.framework.schema`): the possibly-unknown and resolved specs, the policy table
the rules read, the stack-config keys, the outputs and secret outputs, the fields checked at
adoption and the reference table."""


@dataclass(frozen=True)
class Counts:
    """A cluster's GPU counts, each with its declared range: what the PR preview prices and the
    policy pack budgets, read from raw properties by `counts` alone."""

    standard: Span
    """`num_gpus`, ranged by `auto_scale_max_gpus`."""
    preemptible: Span
    """`num_preemptible_gpus` (the target), ranged by `max_preemptible_gpus`."""


def counts(props: Mapping[str, Any]) -> Counts:
    """The counts of a cluster's raw properties (snake_case; a host's or a preview step's),
    parsed by the table (`Schema.spans`) as the rules parse them."""
    spans = CLUSTER.spans(props)
    return Counts(standard=spans["num_gpus"], preemptible=spans["num_preemptible_gpus"])
