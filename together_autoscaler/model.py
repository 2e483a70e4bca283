"""What one scan observed and what it decided: plain, immutable data (no I/O, no clients), so that
`decide` is a pure function from an :class:`Observed` to a :class:`Decision`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

__all__ = [
    "Action",
    "ClusterState",
    "Decision",
    "Explanation",
    "Limits",
    "Memory",
    "NodeState",
    "Observed",
    "PendingPod",
    "Reason",
]


@dataclass(frozen=True)
class Limits:
    """The range and the windows the controller was started with (seconds, GPUs, USD)."""

    min_gpus: int
    max_gpus: int
    unneeded_seconds: float = 600.0
    provision_timeout_seconds: float = 900.0
    max_hourly_usd: float | None = None
    on_demand_rate: float | None = None
    """USD per GPU-hour on demand of the cluster's GPU type (needed with ``max_hourly_usd``)."""


@dataclass(frozen=True)
class ClusterState:
    """What Together reports: the preemptible target, what is live, and the standard GPUs."""

    desired: int
    allocated: int
    standard_gpus: int = 0


@dataclass(frozen=True)
class PendingPod:
    """A pod the scheduler marked ``PodScheduled=False`` with reason ``Unschedulable``."""

    namespace: str
    name: str
    uid: str
    gpus: int
    needs_preemptible: bool
    """It can only run on preemptible nodes (nodeSelector, required affinity or a toleration)."""
    may_use_preemptible: bool = True
    """Nothing keeps it off preemptible nodes (so an idle preemptible node could take it)."""


@dataclass(frozen=True)
class NodeState:
    """A preemptible Node as Kubernetes shows it."""

    name: str
    gpus: int
    ready: bool = True
    cordoned: bool = False
    marked: bool = False
    """Cordoned and annotated by us for Together's targeted scale-down."""
    reclaimed: bool = False
    """Together is taking it back (a reclaim notice): it will refill toward the same target."""
    used_gpus: int = 0
    workload_pods: int = 0
    """Pods bound to it that have not ended, DaemonSet and mirror pods aside."""


@dataclass(frozen=True)
class Memory:
    """What one scan hands the next (how long a node has been idle, since when Together has been
    short of the target), inside both :class:`Observed` and :class:`Decision`: so `decide` stays
    pure, and a test can play any history by handing it the memory it wants."""

    shortfall_since: float | None = None
    """When allocated was first seen below desired (None: not short now)."""
    hold_until: float | None = None
    """Scarcity: no raise before this time."""
    idle_since: Mapping[str, float] = field(default_factory=dict)
    """Per idle node (Ready, uncordoned, no workload pod): since when it has been idle."""


@dataclass(frozen=True)
class Observed:
    """Everything one scan saw, and what the last scan handed on: `decide`'s one argument."""

    now: float
    cluster: ClusterState
    limits: Limits
    nodes: tuple[NodeState, ...] = ()
    pending: tuple[PendingPod, ...] = ()
    memory: Memory = field(default_factory=Memory)


class Action(StrEnum):
    SCALE_UP = "scale_up"
    SCALE_DOWN = "scale_down"
    HOLD = "hold"
    """A change was wanted but is not allowed now (scarcity, the maximum, the budget)."""
    NONE = "none"


class Reason(StrEnum):
    """Why: a decision's reason (the metric label) and its Events' (the Cluster Autoscaler's
    word where it has one). A new reason is declared here, and only here."""

    # The target is below the minimum: raised to it.
    BELOW_MINIMUM = "BelowMinimum"
    # Pending pods need more preemptible nodes: the target is raised (maybe capped).
    TRIGGERED_SCALE_UP = "TriggeredScaleUp"
    # A pod requests more GPUs than a node has: no node could run it.
    NOT_TRIGGER_SCALE_UP = "NotTriggerScaleUp"
    # Held: the target is at --max-preemptible-gpus.
    MAX_PREEMPTIBLE_GPUS_REACHED = "MaxPreemptibleGpusReached"
    # Held: a higher target would cost more than --max-hourly-usd.
    MAX_HOURLY_USD_REACHED = "MaxHourlyUsdReached"
    # Held: Together has been short of the target past the provisioning timeout.
    SCALE_UP_SCARCITY = "ScaleUpScarcity"
    # Nothing to do.
    NO_CHANGE = "NoChange"
    # Idle nodes named for targeted scale-down: the target drops by their GPUs.
    SCALE_DOWN = "ScaleDown"
    # Idle nodes kept: pending pods would fit on them.
    SCALE_DOWN_PENDING_PODS = "ScaleDownPendingPods"
    # Idle nodes kept: Together is short of the target, a drop would not remove them.
    SCALE_DOWN_SHORTFALL = "ScaleDownShortfall"
    # Idle nodes kept: a reclaim is draining a node, a drop would cancel the refill.
    SCALE_DOWN_RECLAIM = "ScaleDownReclaim"
    # Idle nodes kept: the target is at the minimum.
    SCALE_DOWN_MINIMUM = "ScaleDownMinimum"


@dataclass(frozen=True)
class Explanation:
    """One Kubernetes Event to record: on a pod (``namespace`` set) or on a node."""

    kind: str  # "Pod" | "Node"
    name: str
    reason: Reason
    message: str
    namespace: str = ""
    uid: str = ""
    warning: bool = False


@dataclass(frozen=True)
class Decision:
    action: Action
    reason: Reason
    """Why, in one CamelCase word (the metric label and the Events' reason)."""
    message: str
    target: int
    """The preemptible target to PUT (equal to the observed desired: no PUT)."""
    memory: Memory
    pending_gpus: int = 0
    scale_down_nodes: tuple[str, ...] = ()
    """Nodes to cordon and annotate before the target is lowered by their GPUs."""
    events: tuple[Explanation, ...] = ()
