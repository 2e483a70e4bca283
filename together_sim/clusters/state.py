"""What the simulator knows about one cluster, its nodes and their lifecycle events; stored as
JSON. How the state moves over time is :mod:`together_sim.clusters.lifecycle`'s."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any, Final

from pydantic import BaseModel, Field, model_validator

from together_api.wire import ClusterStatus
from together_facts.values import GPUS_PER_NODE
from together_sim.requests import SimCreateRequest

__all__ = [
    "FAILED_PHASE",
    "PROVISIONING_PLAN",
    "SimCluster",
    "SimEvent",
    "SimNode",
    "reservation_end",
]

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
    """One cluster: its wire fields as the API's own create model (``spec``) plus the
    simulator's bookkeeping (phases, nodes, events, timers); stored as JSON.

    No API field is declared here: a field added to :class:`ClusterCreateRequest` is stored,
    updated and echoed without a change to the simulator."""

    cluster_id: str
    spec: SimCreateRequest
    """The accepted create with the values Together fills in (cluster type, project, driver,
    counts), and every later PUT applied. ``num_preemptible_gpus`` is the preemptible target."""
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
    autoscaler: dict[str, Any] = Field(default_factory=dict)
    """The ``auto_scale`` model's own state: its floor, when each node became idle."""
    volume_ids: list[str] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _upgrade(cls, data: Any) -> Any:
        """A cluster saved before ``spec`` (every wire field at the top level) still loads."""
        if not isinstance(data, dict) or "spec" in data:
            return data
        data = dict(data)
        spec = {k: data.pop(k) for k in list(data) if k in SimCreateRequest.model_fields}
        spec["num_preemptible_gpus"] = data.pop("desired_preemptible_gpus", 0)
        spec.update(data.pop("create_only", None) or {})
        return {**data, "spec": spec}

    @property
    def preemptible_target(self) -> int:
        return self.spec.num_preemptible_gpus or 0

    @property
    def provisioning_done(self) -> bool:
        return self.first_ready_at is not None

    def live(self, *, preemptible: bool) -> list[SimNode]:
        return [n for n in self.nodes if n.preemptible == preemptible]

    def allocated_preemptible_gpus(self) -> int:
        return GPUS_PER_NODE * len(self.live(preemptible=True))


def reservation_end(cluster: SimCluster) -> datetime | None:
    """When the cluster's reservation ends: the end it was given (at create or by a PUT), else a
    RESERVED cluster's creation plus its ``duration_days``; None for a cluster with no end."""
    spec = cluster.spec
    if spec.reservation_end_time is not None:
        return spec.reservation_end_time
    if spec.billing_type == "RESERVED" and spec.duration_days:
        start = datetime.fromtimestamp(cluster.created_at, UTC)
        return start + timedelta(days=spec.duration_days)
    return None
