"""Which node a reclaim takes, and when, as pure functions of what the pod watch saw: one node
among those running a live pod of the Job at that moment, chosen once; never a pod that ended."""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from typing import Any, Final

from together_drill.kube import running

RANDOM_AFTER: Final = (2.0, 12.0)
"""A random reclaim comes this many seconds (uniform) after the pod it is timed on started."""

Running = dict[str, list[tuple[str, float]]]
"""Per node: its live pods of the Job, each with when it was first seen running."""


def live(pod: Mapping[str, Any]) -> bool:
    """Running, every container, and not being deleted: a pod a reclaim can still stop."""
    return running(dict(pod)) and not pod["metadata"].get("deletionTimestamp")


def starting(pod: Mapping[str, Any]) -> bool:
    """Placed on a node but not running yet, and not ending: a reclaim of its node would take it
    with it, unseen."""
    return (
        bool(pod["spec"].get("nodeName"))
        and pod.get("_event") != "DELETED"
        and not pod["metadata"].get("deletionTimestamp")
        and not running(dict(pod))
        and pod.get("status", {}).get("phase") in (None, "Pending")
    )


def running_now(
    seen: Iterable[tuple[float, Mapping[str, Any]]], eligible: set[str] | None = None
) -> Running:
    """The live pods by node, from every version the watch saw (the latest of each pod decides
    whether it is live; the first running one, since when). ``eligible``: the nodes a reclaim
    may take (None: any). A node where a pod of the Job is still :func:`starting` is left out
    until that pod runs (a gang's second pod may start seconds after the first on a busy node):
    every wait for a node to reclaim then waits for it, and no reclaim takes a pod unseen."""
    started: dict[str, float] = {}
    latest: dict[str, Mapping[str, Any]] = {}
    for seen_at, pod in seen:
        name = pod["metadata"]["name"]
        latest[name] = pod
        if running(dict(pod)):
            started.setdefault(name, seen_at)
    busy = {pod["spec"]["nodeName"] for pod in latest.values() if starting(pod)}
    nodes: Running = {}
    for name, pod in latest.items():
        if pod.get("_event") == "DELETED" or not live(pod):
            continue
        node = pod["spec"].get("nodeName")
        if node and node not in busy and (eligible is None or node in eligible):
            nodes.setdefault(node, []).append((name, started[name]))
    return nodes


def choose(now: Running, rng: random.Random) -> tuple[str, list[str]] | None:
    """One node among those running a live pod now, and its live pods; None if there is none."""
    if not now:
        return None
    node = rng.choice(sorted(now))
    return node, sorted(name for name, _ in now[node])


def random_due(now: Running, rng: random.Random) -> float:
    """When a random reclaim is due: 2-12 s into the life of the latest-started live pod (so the
    pod it hits has run a while, whichever node is then chosen)."""
    started = max(t for pods in now.values() for _, t in pods)
    return started + rng.uniform(*RANDOM_AFTER)


def ended_early(
    job: str, ended_seconds: float, number: int, total: int, due_seconds: float | None, how: str
) -> str:
    """The one sentence of a Job that ended (``how``: Complete, Failed: reason) before reclaim
    ``number`` (1-based) was due."""
    due = f" (due at +{due_seconds:.1f} s)" if due_seconds is not None else ""
    return (
        f"Job {job} ended ({how}) at +{ended_seconds:.1f} s, before reclaim {number} of "
        f"{total} was due{due}, so there was nothing left to reclaim: give fewer --reclaims, "
        "earlier --at times, or a workload that runs longer"
    )
