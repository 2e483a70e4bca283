"""What the Kubernetes side needs to know of the simulated world, copied out under the world's
lock so the control-plane threads never touch the world itself."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Final

from together_api.wire import ClusterStatus
from together_sim.autoscale import bounds
from together_sim.clusters.state import PROVISIONING_PLAN, SimCluster, SimNode
from together_sim.model import World

__all__ = ["DRAIN_REASONS", "ClusterView", "NodeView", "VolumeView", "views_of"]

DRAIN_REASONS: Final = ("TogetherPreemptionNotified", "TogetherScaledDown")
_DATA_PLANE_UP_AT: Final = next(
    i for i, step in enumerate(PROVISIONING_PLAN) if step[0] == ClusterStatus.WAITING_FOR_SUBNET
)
"""The control plane starts when the data-plane step is over (the cluster waits for its subnet)."""


@dataclass(frozen=True)
class NodeView:
    node_id: str
    preemptible: bool
    ready: bool
    removed: bool
    draining_since: float | None
    drain_reason: str
    drain_message: str


@dataclass(frozen=True)
class VolumeView:
    volume_id: str
    volume_name: str
    size_tib: int


@dataclass(frozen=True)
class ClusterView:
    cluster_id: str
    cluster_name: str
    gpu_type: str
    now: float
    data_plane_up: bool
    gone: bool
    """Deleting, failed or forgotten: its control plane stops."""
    provisioned: bool
    """The cluster has been Ready: its first nodes are up (they are Ready when it is)."""
    nodes: tuple[NodeView, ...]
    volumes: tuple[VolumeView, ...]
    auto_scale: bool = False
    """Created with ``auto_scale``: each pass reads the demand Together's autoscaler steps on."""

    def changed_from(self, previous: ClusterView) -> bool:
        """Whether the cluster differs from ``previous`` in more than ``now``: every hub pass
        advances the clock, so counting it would make every view a change. What the clock alone
        drives (pods' simulated run times) waits for the mirror's next tick, and what it changes
        in the world (a node becoming ready) is a change of a field. The comparison is the
        dataclass's field by field, frozen values all the way down: a few dozen at most."""
        return replace(previous, now=self.now) != self


def _node(c: SimCluster, node: SimNode, now: float, *, removed: bool) -> NodeView:
    reason, message = "", ""
    for event in reversed(c.events):
        if event.node_id == node.node_id and event.reason in DRAIN_REASONS:
            reason, message = event.reason, event.message
            break
    return NodeView(
        node_id=node.node_id,
        preemptible=node.preemptible,
        ready=node.ready_at <= now,
        removed=removed,
        draining_since=node.draining_since,
        drain_reason=reason,
        drain_message=message,
    )


def views_of(world: World) -> dict[str, ClusterView]:
    result: dict[str, ClusterView] = {}
    for c in world.clusters.values():
        gone = c.deleting_since is not None or c.failed_at is not None
        nodes = [_node(c, n, world.now, removed=False) for n in c.nodes]
        nodes += [_node(c, n, world.now, removed=True) for n in c.deleted_nodes]
        volumes = [
            VolumeView(v.volume_id, v.spec.volume_name, v.spec.size_tib)
            for v in (world.volumes.by_id.get(i) for i in c.volume_ids)
            if v is not None and v.deleting_since is None
        ]
        result[c.cluster_id] = ClusterView(
            cluster_id=c.cluster_id,
            cluster_name=c.spec.cluster_name,
            gpu_type=c.spec.gpu_type,
            now=world.now,
            data_plane_up=c.provisioning_done or c.plan_index > _DATA_PLANE_UP_AT,
            gone=gone,
            provisioned=c.provisioning_done,
            nodes=tuple(nodes),
            volumes=tuple(volumes),
            auto_scale=bounds(c) is not None,
        )
    return result
