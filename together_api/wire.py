"""The JSON wire schema of Together's GPU clusters API, in one place for client and simulator: field
names follow the official ``together`` SDK 3.1.1 (generated from Together's OpenAPI spec)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

# The value sets and constants live in `together_facts.values` (no pydantic), so the provider's
# check and diff, the policy pack and the autoscaler read them without loading pydantic; the
# models below use them, and every reader imports them from there, not through this module.
from together_facts.values import (
    GPUS_PER_NODE,
    PREEMPTION_REASONS,
    BillingType,
    ClusterType,
    GpuType,
    LoadBalancer,
)

__all__ = [
    "AcceptanceTestsParams",
    "AddOn",
    "AddOnRequest",
    "Cluster",
    "ClusterConfig",
    "ClusterCreateRequest",
    "ClusterDeleteResponse",
    "ClusterList",
    "ClusterStatus",
    "ClusterUpdateRequest",
    "ControlPlaneNode",
    "DriverVersion",
    "ErrorBody",
    "ErrorDetail",
    "GpuWorkerNode",
    "NodeLifecycleEvent",
    "NodePhaseTransition",
    "OidcConfig",
    "PhaseTransition",
    "Region",
    "RegionList",
    "SharedVolume",
    "Volume",
    "VolumeCreateRequest",
    "VolumeDeleteResponse",
    "VolumeList",
    "VolumeStatus",
    "VolumeUpdateRequest",
    "is_failed_phase",
]


class ClusterStatus:
    """Known values of ``Cluster.status``; the field itself stays a plain ``str``.

    Anything not listed here (a status Together adds later) counts as "not ready".
    """

    WAITING_FOR_CONTROL_PLANE_NODES: Final = "WaitingForControlPlaneNodes"
    WAITING_FOR_DATA_PLANE_NODES: Final = "WaitingForDataPlaneNodes"
    WAITING_FOR_SUBNET: Final = "WaitingForSubnet"
    WAITING_FOR_SHARED_VOLUME: Final = "WaitingForSharedVolume"
    INSTALLING_DRIVERS: Final = "InstallingDrivers"
    RUNNING_ACCEPTANCE_TESTS: Final = "RunningAcceptanceTests"
    PAUSED: Final = "Paused"
    ON_DEMAND_COMPUTE_PAUSED: Final = "OnDemandComputePaused"
    READY: Final = "Ready"
    DEGRADED: Final = "Degraded"
    DELETING: Final = "Deleting"

    PROVISIONING: Final = (
        WAITING_FOR_CONTROL_PLANE_NODES,
        WAITING_FOR_DATA_PLANE_NODES,
        WAITING_FOR_SUBNET,
        WAITING_FOR_SHARED_VOLUME,
        INSTALLING_DRIVERS,
        RUNNING_ACCEPTANCE_TESTS,
    )


def is_failed_phase(phase: str | None) -> bool:
    """True for cluster phases such as ``CLUSTER_PHASE_ACCEPTANCE_TESTS_FAILED``."""
    return phase is not None and phase.endswith("_FAILED")


# --------------------------------------------------------------------------- requests


class _Request(BaseModel):
    """Request models are strict (``extra="forbid"``, enums as ``Literal``): a typo in what *we*
    send is a bug we want to see at once."""

    model_config = ConfigDict(extra="forbid")

    def to_json(self) -> dict[str, Any]:
        """The body to send: only fields that were set, never explicit nulls."""
        return self.model_dump(mode="json", exclude_none=True, exclude_unset=True)


class _Toggle(_Request):
    enabled: bool | None = None


class AddOnConfig(_Request):
    dashboard: _Toggle | None = None
    headlamp: _Toggle | None = None
    ingress: _Toggle | None = None
    slurm_web: _Toggle | None = None


class AddOnRequest(_Request):
    """An add-on in a request; ``add_on_type`` is needed on create, ``name`` always."""

    name: str
    add_on_type: str | None = None
    config: AddOnConfig | None = None


class SlurmStartupScripts(_Request):
    controller_epilog: str | None = None
    controller_prolog: str | None = None
    extra_slurm_conf: str | None = None
    login_init_script: str | None = None
    nodeset_init_script: str | None = None
    worker_epilog: str | None = None
    worker_prolog: str | None = None


class ClusterConfig(_Request):
    load_balancer: LoadBalancer
    gpu_operator_version: str | None = None
    network_operator_version: str | None = None
    ingress: _Toggle | None = None
    observability: _Toggle | None = None
    jumphost_enabled: bool | None = None
    kubernetes_dashboard_enabled: bool | None = None
    ssh_ca_enabled: bool | None = None
    slurm_startup_scripts: SlurmStartupScripts | None = None


class OidcConfig(_Request):
    client_id: str
    issuer_url: str
    username_claim: str
    username_prefix: str
    group_claim: str
    group_prefix: str
    ca_cert: str | None = None


class AcceptanceTestsParams(_Request):
    enabled: bool | None = None
    dcgm_diag_level: (
        Literal[
            "DCGM_DIAG_LEVEL_SHORT",
            "DCGM_DIAG_LEVEL_MEDIUM",
            "DCGM_DIAG_LEVEL_LONG",
            "DCGM_DIAG_LEVEL_EXTENDED",
        ]
        | None
    ) = None
    dcgm_diag_skipped: bool | None = None
    gpu_burn_duration: int | None = None
    gpu_burn_skipped: bool | None = None
    nccl_single_node_skipped: bool | None = None
    nccl_multi_node_skipped: bool | None = None
    storage_skipped: bool | None = None


class VolumeCreateRequest(_Request):
    """Body of ``POST /compute/clusters/storage/volumes``, and the inline ``shared_volume`` of a
    cluster create. ``size_tib`` is whole TiB; ``is_lifecycle_independent=True`` keeps the volume
    when the cluster using it is deleted (the SDK's docstring: otherwise it goes with it)."""

    volume_name: str
    size_tib: int
    region: str
    is_lifecycle_independent: bool | None = None
    project_id: str | None = None
    instance_cluster_id: str | None = None


"""The inline ``shared_volume`` of a cluster create has the same shape as a volume create."""


class VolumeUpdateRequest(_Request):
    """Body of ``PUT /compute/clusters/storage/volumes``: the id goes in the body, not the path.

    Only ``size_tib`` can change; Together documents growing freely and shrinking only through
    support."""

    volume_id: str
    size_tib: int | None = None


class ClusterCreateRequest(_Request):
    """Body of ``POST /compute/clusters``.

    ``num_gpus`` is the *standard* GPU count; ``num_preemptible_gpus`` is the
    preemptible target. The driver is chosen either by ``nvidia_version_id`` or
    by the pair ``cuda_version`` + ``nvidia_driver_version``.
    """

    cluster_name: str
    region: str
    gpu_type: GpuType
    num_gpus: int
    billing_type: BillingType
    cluster_type: ClusterType | None = None
    cuda_version: str | None = None
    nvidia_driver_version: str | None = None
    nvidia_version_id: str | None = None
    num_preemptible_gpus: int | None = None
    project_id: str | None = None
    duration_days: int | None = None
    num_reserved_gpus: int | None = None
    capacity_pool_id: str | None = None
    num_capacity_pool_gpus: int | None = None
    reservation_start_time: datetime | None = None
    reservation_end_time: datetime | None = None
    volume_id: str | None = None
    shared_volume: VolumeCreateRequest | None = None
    auto_scale: bool | None = None
    auto_scale_max_gpus: int | None = None
    install_traefik: bool | None = None
    slurm_shm_size_gib: int | None = None
    slurm_image: str | None = None
    acceptance_tests_params: AcceptanceTestsParams | None = None
    add_ons: list[AddOnRequest] | None = None
    cluster_config: ClusterConfig | None = None
    oidc_config: OidcConfig | None = None


class ClusterUpdateRequest(_Request):
    """Body of ``PUT /compute/clusters/{id}``: every field optional, omitted = keep."""

    num_gpus: int | None = None
    num_preemptible_gpus: int | None = None
    cluster_type: ClusterType | None = None
    num_reserved_gpus: int | None = None
    num_capacity_pool_gpus: int | None = None
    reservation_end_time: datetime | None = None
    add_ons: list[AddOnRequest] | None = None
    cluster_config: ClusterConfig | None = None


# -------------------------------------------------------------------------- responses


class _Response(BaseModel):
    """Response models are lenient (``extra="allow"``, enums and ``status`` as plain ``str``, most
    fields defaulted): a new API field, GPU type or status must never break a user's ``pulumi up``.
    """

    model_config = ConfigDict(extra="allow")


class NodePhaseTransition(_Response):
    phase: str
    transition_time: datetime


class PhaseTransition(_Response):
    """One entry of a cluster's phase history, e.g. ``CLUSTER_PHASE_READY``."""

    phase: str
    transition_time: datetime


class ControlPlaneNode(_Response):
    node_id: str
    host_name: str = ""
    status: str = ""
    num_cpu_cores: int = 0
    memory_gib: float = 0.0
    network: str = ""
    phase_transitions: list[NodePhaseTransition] = Field(default_factory=list)
    public_ipv4: str | None = None


class GpuWorkerNode(_Response):
    """A GPU node; the same shape serves live and deleted nodes (``deleted_at`` set)."""

    node_id: str
    host_name: str = ""
    status: str = ""
    num_cpu_cores: int = 0
    num_gpus: int = GPUS_PER_NODE
    memory_gib: float = 0.0
    networks: list[str] = Field(default_factory=list)
    phase_transitions: list[NodePhaseTransition] = Field(default_factory=list)
    instance_id: str | None = None
    deleted_at: datetime | None = None
    marked_for_deletion: bool | None = None
    ephemeral_storage: str | None = None
    public_ipv4: str | None = None
    node_name: str | None = None
    """The Kubernetes node name (``gpu-dp-…`` standard, ``gpu-preemptible-dp-…`` preemptible).
    Together's docs show it; the SDK 3.1.1 model dropped it, so it may be absent."""

    @property
    def is_preemptible(self) -> bool:
        """Preemptible nodes are only recognisable by name (``gpu-preemptible-dp-*``)."""
        names = (self.node_id, self.host_name, self.node_name or "")
        return any("preemptible" in name for name in names)


class NodeLifecycleEvent(_Response):
    """A node event such as a reclaim notice (see :data:`PREEMPTION_REASONS`)."""

    node_id: str
    reason: str
    message: str = ""
    timestamp: datetime

    @property
    def is_preemption(self) -> bool:
        return self.reason in PREEMPTION_REASONS


class VolumeStatus:
    """Known values of a shared volume's ``status`` (the SDK's 8-value enum); the field stays a
    plain ``str``, and a value not listed here counts as "not available"."""

    SCHEDULED: Final = "scheduled"
    PROVISIONING: Final = "provisioning"
    AVAILABLE: Final = "available"
    BOUND: Final = "bound"
    DELETING: Final = "deleting"
    FAILED: Final = "failed"
    ACCESS_REVOKED: Final = "access_revoked"
    UNKNOWN: Final = "unknown"

    USABLE: Final = (AVAILABLE, BOUND)
    """A volume in one of these can be attached to a cluster and holds data."""


class Volume(_Response):
    """A shared volume as a cluster lists it in ``volumes`` (status is a free string there)."""

    volume_id: str
    volume_name: str = ""
    size_tib: int = 0
    status: str = ""


class AddOn(_Response):
    add_on_type: str = ""
    name: str = ""
    config: dict[str, Any] = Field(default_factory=dict)
    state: dict[str, Any] = Field(default_factory=dict)


class Cluster(_Response):
    """A cluster as Together reports it (create, get, update and list items).

    ``num_gpus`` counts standard GPUs only; ``desired_preemptible_gpus`` echoes
    the preemptible target and ``allocated_preemptible_gpus`` counts preemptible
    GPUs that are live now, which may stay below the target.
    """

    cluster_id: str
    cluster_name: str = ""
    cluster_type: str = "KUBERNETES"
    region: str = ""
    project_id: str = ""
    gpu_type: str = ""
    num_gpus: int = 0
    num_reserved_gpus: int = 0
    num_capacity_pool_gpus: int = 0
    num_cpu_workers: int = 0
    desired_preemptible_gpus: int = 0
    allocated_preemptible_gpus: int = 0
    billing_type: str = ""
    cuda_version: str = ""
    nvidia_driver_version: str = ""
    status: str
    phase_transitions: list[PhaseTransition] = Field(default_factory=list)
    control_plane_nodes: list[ControlPlaneNode] = Field(default_factory=list)
    gpu_worker_nodes: list[GpuWorkerNode] = Field(default_factory=list)
    deleted_gpu_worker_nodes: list[GpuWorkerNode] | None = None
    node_lifecycle_events: list[NodeLifecycleEvent] | None = None
    volumes: list[Volume] = Field(default_factory=list)
    kube_config: str = ""
    add_ons: list[AddOn] = Field(default_factory=list)
    created_at: datetime | None = None
    first_ready_at: datetime | None = None
    control_plane_ready: bool | None = None
    capacity_pool_id: str | None = None
    duration_hours: int | None = None
    reservation_start_time: datetime | None = None
    reservation_end_time: datetime | None = None
    nvidia_driver_version_id: str | None = None
    install_traefik: bool | None = None
    cluster_config: dict[str, Any] | None = None
    oidc_config: dict[str, Any] | None = None
    slurm_shm_size_gib: int | None = None
    os_image: str | None = None
    is_in_substrate: bool | None = None
    machine_cluster_id: str | None = None
    ums_org_id: str | None = None
    ums_project_id: str | None = None

    @property
    def is_ready(self) -> bool:
        return self.status == ClusterStatus.READY

    @property
    def is_deleting(self) -> bool:
        return self.status == ClusterStatus.DELETING

    @property
    def latest_phase(self) -> str | None:
        return self.phase_transitions[-1].phase if self.phase_transitions else None

    @property
    def is_failed(self) -> bool:
        """Provisioning failed: the latest phase is a ``*_FAILED`` one."""
        return is_failed_phase(self.latest_phase)

    @property
    def attached_volume_id(self) -> str | None:
        """The id of the shared volume attached at create (a cluster has at most one), if any."""
        return self.volumes[0].volume_id if self.volumes else None


class ClusterList(_Response):
    clusters: list[Cluster] = Field(default_factory=list)


class ClusterDeleteResponse(_Response):
    cluster_id: str


class SharedVolume(_Response):
    """A shared volume from ``/compute/clusters/storage/volumes`` (create, get, resize, list).

    The SDK's ``ClusterStorage`` has exactly four fields: ``volume_id``, ``volume_name``,
    ``size_tib`` and ``status`` (see :class:`VolumeStatus`). The optional ones below are *not*
    in any Together response today; they are here so that a field Together adds is picked up, and
    they are ``None`` from both the real API and the simulator. A caller must keep what it sent
    (region, ``is_lifecycle_independent``, project) itself, and learn which clusters use a volume
    from the clusters' own ``volumes`` lists (:meth:`TogetherClient.clusters_using_volume`).
    """

    volume_id: str
    volume_name: str = ""
    size_tib: int = 0
    status: str = ""
    region: str | None = None
    is_lifecycle_independent: bool | None = None
    project_id: str | None = None
    cluster_ids: list[str] | None = None

    @property
    def is_available(self) -> bool:
        """Usable: ``available`` (free) or ``bound`` (attached to a Ready cluster)."""
        return self.status in VolumeStatus.USABLE

    @property
    def is_deleting(self) -> bool:
        return self.status == VolumeStatus.DELETING

    @property
    def is_failed(self) -> bool:
        return self.status in (VolumeStatus.FAILED, VolumeStatus.ACCESS_REVOKED)


class VolumeList(_Response):
    volumes: list[SharedVolume] = Field(default_factory=list)


class VolumeDeleteResponse(_Response):
    success: bool = False


class DriverVersion(_Response):
    """A CUDA + driver pair a region offers; ``id`` goes into ``nvidia_version_id``."""

    id: str = ""
    cuda_version: str
    nvidia_driver_version: str
    os: str = ""


class Region(_Response):
    name: str
    supported_instance_types: list[str] = Field(default_factory=list)
    driver_versions: list[DriverVersion] = Field(default_factory=list)


class RegionList(_Response):
    regions: list[Region] = Field(default_factory=list)


class ErrorDetail(_Response):
    message: str = ""
    type: str | None = None
    param: str | None = None
    code: Any = None


class ErrorBody(_Response):
    """Error bodies come as ``{"error": {...}}`` or gRPC-style ``{"code", "message"}``."""

    error: ErrorDetail | None = None
    code: Any = None
    message: str | None = None

    @property
    def text(self) -> str | None:
        if self.error is not None and self.error.message:
            return self.error.message
        return self.message

    @property
    def param(self) -> str | None:
        return self.error.param if self.error is not None else None
