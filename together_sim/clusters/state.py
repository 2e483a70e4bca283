"""What the simulator knows about one cluster, its nodes and their lifecycle events; stored as
JSON. How the state moves over time is :class:`together_sim.model.World`'s."""

from __future__ import annotations

from typing import Any, Final

from pydantic import BaseModel, Field

from together_api.wire import GPUS_PER_NODE, ClusterStatus

__all__ = ["FAILED_PHASE", "PROVISIONING_PLAN", "SimCluster", "SimEvent", "SimNode"]

PROVISIONING_PLAN: Final = (
    # (status, phase, fraction of the provisioning time at which it starts)
    (ClusterStatus.WAITING_FOR_CONTROL_PLANE_NODES, "WAITING_FOR_CONTROL_PLANE_NODES", 0.0),
    (ClusterStatus.WAITING_FOR_DATA_PLANE_NODES, "WAITING_FOR_DATA_PLANE_NODES", 1 / 6),
    (ClusterStatus.WAITING_FOR_SUBNET, "WAITING_FOR_SUBNET", 2 / 6),
    (ClusterStatus.INSTALLING_DRIVERS, "INSTALLING_DRIVERS", 3 / 6),
    (ClusterStatus.RUNNING_ACCEPTANCE_TESTS, "RUNNING_ACCEPTANCE_TESTS", 4 / 6),
    (ClusterStatus.READY, "READY", 1.0),
)
FAILED_PHASE: Final = "CLUSTER_PHASE_ACCEPTANCE_TESTS_FAILED"


class SimNode(BaseModel):
    node_id: str
    preemptible: bool
    created_at: float
    ready_at: float
    draining_since: float | None = None
    drain_window: float | None = None
    """This node's drain window when its reclaim asked for one (``drain_seconds``, an admin knob
    to watch a reclaim at a human pace); None is Together's 300 s."""
    deleted_at: float | None = None
    reclaim_at: float | None = None


class SimEvent(BaseModel):
    node_id: str
    reason: str
    message: str
    at: float


class SimCluster(BaseModel):
    """Everything the simulator knows about one cluster; stored as JSON."""

    cluster_id: str
    cluster_name: str
    cluster_type: str
    region: str
    gpu_type: str
    billing_type: str
    project_id: str
    cuda_version: str
    nvidia_driver_version: str
    nvidia_version_id: str
    num_gpus: int
    num_reserved_gpus: int = 0
    num_capacity_pool_gpus: int = 0
    capacity_pool_id: str | None = None
    desired_preemptible_gpus: int = 0
    duration_days: int | None = None
    reservation_end_time: str | None = None
    created_at: float
    status: str = ClusterStatus.WAITING_FOR_CONTROL_PLANE_NODES
    phases: list[tuple[str, float]] = Field(default_factory=list)
    plan_index: int = 0
    fail_provisioning: bool = False
    failed_at: float | None = None
    first_ready_at: float | None = None
    deleting_since: float | None = None
    next_fill_at: float | None = None
    node_seq: int = 0
    nodes: list[SimNode] = Field(default_factory=list)
    deleted_nodes: list[SimNode] = Field(default_factory=list)
    events: list[SimEvent] = Field(default_factory=list)
    add_ons: list[dict[str, Any]] = Field(default_factory=list)
    cluster_config: dict[str, Any] | None = None
    oidc_config: dict[str, Any] | None = None
    install_traefik: bool = False
    slurm_shm_size_gib: int | None = None
    reservation_start_time: str | None = None
    create_only: dict[str, Any] = Field(default_factory=dict)
    """Accepted create fields the response never shows (auto_scale*, slurm_image, ...)."""
    autoscaler: dict[str, Any] = Field(default_factory=dict)
    """The ``auto_scale`` model's own state: its floor, when each node became idle."""
    volume_ids: list[str] = Field(default_factory=list)

    @property
    def provisioning_done(self) -> bool:
        return self.first_ready_at is not None

    def live(self, *, preemptible: bool) -> list[SimNode]:
        return [n for n in self.nodes if n.preemptible == preemptible]

    def allocated_preemptible_gpus(self) -> int:
        return GPUS_PER_NODE * len(self.live(preemptible=True))
