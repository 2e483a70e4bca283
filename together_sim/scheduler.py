"""The simulator's only notion of time passing, so no thread races a request: each request first
replays, in time order, every event of every cluster and volume that became due since the last."""

from __future__ import annotations

from collections.abc import Callable

from together_sim.clusters.context import Place
from together_sim.clusters.lifecycle import due_events

__all__ = ["Event", "advance"]

Event = tuple[float, Callable[[], None]]
"""When, and what happens then."""


def advance(world: Place, to: float) -> None:
    """Apply, in time order, every event due at or before ``to``; ``world.now`` ends at ``to``.
    Events of all clusters are interleaved because clusters share the capacity of a pool."""
    while True:
        due = _next_event(world)
        if due is None or due[0] > to:
            break
        when, action = due
        world.now = max(world.now, when)
        action()
    world.now = max(world.now, to)


def _next_event(world: Place) -> Event | None:
    candidates: list[Event] = []
    removal = world.volumes.next_removal()
    if removal is not None:
        volume_id = removal[1]
        candidates.append((removal[0], lambda: world.volumes.forget(volume_id)))
    for cluster in list(world.clusters.values()):
        candidates += due_events(world, cluster)
    return min(candidates, key=lambda event: event[0], default=None)
