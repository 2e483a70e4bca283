"""A cluster's phases over time, provisioning through Ready, failure and deletion, and the events
each state has due, so the scheduler can replay every cluster's time in order."""

from __future__ import annotations

from collections.abc import Callable

from together_api.wire import ClusterStatus
from together_sim.clusters import nodes
from together_sim.clusters.context import Place
from together_sim.clusters.reclaims import reclaim_now
from together_sim.clusters.state import FAILED_PHASE, PROVISIONING_PLAN, SimCluster, SimNode
from together_sim.errors import SimError

__all__ = ["admit", "due_events", "fail", "start_deleting"]


def admit(world: Place, c: SimCluster) -> None:
    """Register a validated new cluster: 409 without the standard capacity, else its standard
    nodes are planned and its first phase starts."""
    if c.spec.num_gpus > world.standard_spare(c.spec.region, c.spec.gpu_type):
        raise SimError(409, "Out of stock")
    world.clusters[c.cluster_id] = c
    nodes.add_standard(world, c)
    _enter_phase(world, c)


def start_deleting(world: Place, c: SimCluster) -> None:
    if c.deleting_since is None:
        c.status = ClusterStatus.DELETING
        c.deleting_since = world.now
        c.phases.append(("CLUSTER_PHASE_DELETING", world.now))


def fail(world: Place, c: SimCluster) -> None:
    """Provisioning fails now: the latest phase becomes ``CLUSTER_PHASE_ACCEPTANCE_TESTS_FAILED``
    while ``status`` keeps its last provisioning value (the status enum has no failed value);
    after ``failed_teardown`` seconds Together tears the cluster down (``Deleting``, then 404)."""
    if c.provisioning_done:
        raise SimError(409, f"cluster {c.cluster_id} already finished provisioning")
    if c.failed_at is None and c.deleting_since is None:
        c.failed_at = world.now
        c.phases.append((FAILED_PHASE, world.now))


def due_events(world: Place, c: SimCluster) -> list[tuple[float, Callable[[], None]]]:
    """What happens next to ``c`` and when (the scheduler runs the earliest of all clusters')."""
    t = world.timings
    if c.deleting_since is not None:
        return [(c.deleting_since + t.deleting, lambda: _forget(world, c))]
    if c.failed_at is not None:
        return [(c.failed_at + t.failed_teardown, lambda: start_deleting(world, c))]
    events: list[tuple[float, Callable[[], None]]] = []
    if not c.provisioning_done:
        status, _, fraction = PROVISIONING_PLAN[c.plan_index]
        when = c.created_at + fraction * t.provisioning
        if status == ClusterStatus.READY and c.fail_provisioning:
            events.append((when, lambda: fail(world, c)))
        else:
            events.append((when, lambda: _enter_phase(world, c)))
    for node in c.nodes:
        if node.draining_since is not None:
            window = t.drain_window if node.drain_window is None else node.drain_window
            events.append((node.draining_since + window, _remover(world, c, node)))
        elif node.reclaim_at is not None:
            events.append((node.reclaim_at, _reclaimer(world, c, node)))
    fill_at = nodes.fill_time(world, c)
    if fill_at is not None:
        events.append((fill_at, lambda: nodes.add_preemptible(world, c)))
    return events


def _remover(world: Place, c: SimCluster, node: SimNode) -> Callable[[], None]:
    return lambda: nodes.remove_node(world, c, node)


def _reclaimer(world: Place, c: SimCluster, node: SimNode) -> Callable[[], None]:
    return lambda: reclaim_now(world, c, node)


def _enter_phase(world: Place, c: SimCluster) -> None:
    status, phase, _ = PROVISIONING_PLAN[c.plan_index]
    c.status = status
    c.phases.append((f"CLUSTER_PHASE_{phase}", world.now))
    c.plan_index += 1
    if status == ClusterStatus.READY:
        c.first_ready_at = world.now
        c.next_fill_at = world.now + world.timings.fill_interval
        world.volumes.bind(c.volume_ids, c.cluster_id)


def _forget(world: Place, c: SimCluster) -> None:
    del world.clusters[c.cluster_id]
    world.volumes.release(c.volume_ids, c.cluster_id, world.now)
