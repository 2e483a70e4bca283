"""The autoscaler's decision: a pure function from what one scan observed to what to do, modelled on
the Cluster Autoscaler's ``RunOnce`` for one node group of 8-GPU preemptible nodes."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from together_autoscaler.model import (
    Action,
    Decision,
    Explanation,
    Memory,
    NodeState,
    Observed,
    PendingPod,
    Reason,
)
from together_facts.packing import nodes_to_add
from together_facts.prices import max_preemptible_within
from together_facts.values import GPUS_PER_NODE

__all__ = ["budget_ceiling", "decide", "nodes_missing"]


def decide(observed: Observed) -> Decision:
    """What to do now; never raises, never does I/O.

    * **Scale up.** Pods that need preemptible nodes and that the scheduler marked Unschedulable
      are packed (first fit, largest first) onto the free GPUs of Ready preemptible nodes, then
      onto the capacity already on its way (`nodes_missing`): reclaimed nodes count, as Together
      refills toward the same target, so the pods they evicted are not new demand. The target is
      raised by exactly the nodes still missing, capped at the maximum and at the hourly budget:
      one PUT per burst. A target below the minimum is raised to it first.
    * **Scarcity.** When allocated has stayed below desired for longer than the provisioning
      timeout, the target is not raised further for one more timeout; the pods are told why.
    * **Scale down.** A preemptible node with no workload pod for the unneeded window is named
      for Together's targeted scale-down (the loop cordons and annotates it, then lowers the
      target by its GPUs), never below the minimum, never while Together is short of the target
      or a reclaim is draining a node (either way the drop would not remove the marked node:
      Together drops the refill instead, and the marked node stays cordoned while the evicted
      pods wait), and never while a pending pod would fit on it.
    """
    o, limits, cluster = observed, observed.limits, observed.cluster
    memory = _remember_shortfall(o)
    idle_since = {n.name: memory.idle_since.get(n.name, o.now) for n in o.nodes if _idle(n)}
    memory = replace(memory, idle_since=idle_since)
    demand = [p for p in o.pending if p.needs_preemptible]

    if cluster.desired < limits.min_gpus:
        return _decision(
            o, Action.SCALE_UP, Reason.BELOW_MINIMUM,
            f"target {cluster.desired} is below the minimum {limits.min_gpus}",
            limits.min_gpus, memory,
        )  # fmt: skip

    too_big = [p for p in demand if p.gpus > GPUS_PER_NODE]
    fitting = [p for p in demand if p.gpus <= GPUS_PER_NODE]
    events = [
        _pod_event(p, Reason.NOT_TRIGGER_SCALE_UP,
                   f"requests {p.gpus} nvidia.com/gpu; a preemptible node has {GPUS_PER_NODE}")
        for p in too_big
    ]  # fmt: skip
    missing = nodes_missing(fitting, o.nodes, cluster.desired)
    hold_until = _scarcity_hold(o, memory)
    if fitting and hold_until is not None:
        return _hold_for_scarcity(o, fitting, missing, memory, hold_until, events)
    if missing:
        return _scale_up(o, fitting, missing, memory, events)
    return _scale_down(o, memory, events)


def nodes_missing(pods: Sequence[PendingPod], nodes: Iterable[NodeState], desired: int) -> int:
    """Preemptible nodes to add so that every pod in ``pods`` has room, once the capacity on its
    way has arrived (the first-fit-decreasing count; every pod fits one node).

    On its way: nodes not Ready yet, nodes a reclaim is taking back (Together replaces them), and
    the part of the target no Node shows yet, whether Together has not allocated it or Kubernetes
    has not registered it (the API's allocated count runs ahead of the Nodes)."""
    bins: list[int] = []
    shown = 0
    for node in nodes:
        if node.marked:
            continue
        shown += node.gpus
        if node.reclaimed or not node.ready:
            bins.append(node.gpus)
        elif not node.cordoned:
            bins.append(max(node.gpus - node.used_gpus, 0))
    bins += [GPUS_PER_NODE] * (max(desired - shown, 0) // GPUS_PER_NODE)
    return nodes_to_add((p.gpus for p in pods), bins)


def budget_ceiling(o: Observed) -> int | None:
    """The largest target (a multiple of 8) whose cluster costs at most ``max_hourly_usd``: the
    standard GPUs on demand plus a filled preemptible target at 50%. None: no budget."""
    limits = o.limits
    if limits.max_hourly_usd is None or not limits.on_demand_rate:
        return None
    return max_preemptible_within(
        limits.max_hourly_usd, limits.on_demand_rate, o.cluster.standard_gpus
    )


def _scale_up(
    o: Observed,
    pods: list[PendingPod],
    missing: int,
    memory: Memory,
    events: list[Explanation],
) -> Decision:
    limits, desired = o.limits, o.cluster.desired
    wanted = desired + missing * GPUS_PER_NODE
    target, reason = wanted, Reason.TRIGGERED_SCALE_UP
    if target > limits.max_gpus:
        target, reason = max(limits.max_gpus, desired), Reason.MAX_PREEMPTIBLE_GPUS_REACHED
    ceiling = budget_ceiling(o)
    if ceiling is not None and target > ceiling:
        target, reason = max(ceiling, limits.min_gpus, desired), Reason.MAX_HOURLY_USD_REACHED
    if target <= desired:
        message = (
            f"{missing} more preemptible node(s) needed, but the target {desired} may not grow: "
            + _cap_words(reason, o)
        )
        return _decision(o, Action.HOLD, reason, message, desired, memory, events, pods,
                         warning=True)  # fmt: skip
    message = (
        f"{len(pods)} pending pod(s) need {missing} more preemptible node(s): "
        f"target {desired} -> {target}"
    )
    if reason is not Reason.TRIGGERED_SCALE_UP:
        message += f" (capped: {_cap_words(reason, o)})"
    return _decision(o, Action.SCALE_UP, Reason.TRIGGERED_SCALE_UP, message, target, memory, events,
                     pods)  # fmt: skip


def _scarcity_hold(o: Observed, memory: Memory) -> float | None:
    """When a scarcity hold ends: the hold already on, or one from now when allocated has stayed
    below desired past the provisioning timeout; None: capacity is not scarce."""
    if memory.hold_until is not None and o.now < memory.hold_until:
        return memory.hold_until
    since = memory.shortfall_since
    if since is not None and o.now - since > o.limits.provision_timeout_seconds:
        return o.now + o.limits.provision_timeout_seconds
    return None


def _hold_for_scarcity(
    o: Observed,
    pods: list[PendingPod],
    missing: int,
    memory: Memory,
    hold_until: float,
    events: list[Explanation],
) -> Decision:
    limits, desired = o.limits, o.cluster.desired
    # The shortfall clock restarts when the hold ends: then one more raise may be tried.
    memory = replace(memory, hold_until=hold_until, shortfall_since=hold_until)
    wanted = f"; {missing * GPUS_PER_NODE} more GPUs would be needed" if missing else ""
    message = (
        f"Together has allocated {o.cluster.allocated} of the {desired} preemptible GPUs asked "
        f"for, for over {limits.provision_timeout_seconds:.0f} s (scarce capacity): not raising "
        f"the target{wanted}; retrying in {hold_until - o.now:.0f} s"
    )
    return _decision(o, Action.HOLD, Reason.SCALE_UP_SCARCITY, message, desired, memory, events,
                     pods, warning=True)  # fmt: skip


def _scale_down(o: Observed, memory: Memory, events: list[Explanation]) -> Decision:
    limits, cluster = o.limits, o.cluster
    fits = [p for p in o.pending if p.may_use_preemptible and p.gpus <= GPUS_PER_NODE]
    due = sorted(
        (since, name)
        for name, since in memory.idle_since.items()
        if o.now - since >= limits.unneeded_seconds
    )
    if not due:
        return _decision(o, Action.NONE, Reason.NO_CHANGE, "nothing to do", cluster.desired, memory,
                         events)  # fmt: skip
    if fits:
        message = f"{len(fits)} pending pod(s) would fit on the idle node(s); keeping them"
        return _decision(o, Action.HOLD, Reason.SCALE_DOWN_PENDING_PODS, message, cluster.desired,
                         memory, events)  # fmt: skip
    if cluster.allocated < cluster.desired:
        message = (
            f"Together is short of the target ({cluster.allocated} of {cluster.desired}): "
            "lowering it would not remove the idle node(s)"
        )
        return _decision(o, Action.HOLD, Reason.SCALE_DOWN_SHORTFALL, message, cluster.desired,
                         memory, events)  # fmt: skip
    draining = [n.name for n in o.nodes if n.reclaimed]
    if draining:
        message = (
            f"a reclaim is draining {', '.join(draining)}: Together refills toward the target, "
            "and lowering it now would cancel the refill, not remove the idle node(s)"
        )
        return _decision(o, Action.HOLD, Reason.SCALE_DOWN_RECLAIM, message, cluster.desired,
                         memory, events)  # fmt: skip
    gpus = {n.name: n.gpus for n in o.nodes}
    chosen: list[str] = []
    target = cluster.desired
    for _, name in due:
        if target - gpus[name] < limits.min_gpus:
            break
        chosen.append(name)
        target -= gpus[name]
    if not chosen:
        # The floor's own nodes idle is the steady state the range declares: no warning each scan.
        message = f"idle node(s) kept: the target {cluster.desired} is at the minimum"
        return _decision(o, Action.NONE, Reason.SCALE_DOWN_MINIMUM, message, cluster.desired,
                         memory, events)  # fmt: skip
    idle_for = o.now - memory.idle_since[chosen[0]]
    message = (
        f"{len(chosen)} preemptible node(s) without workload pods for {idle_for:.0f} s: "
        f"target {cluster.desired} -> {target}"
    )
    events += [
        Explanation("Node", name, Reason.SCALE_DOWN, f"{message}; cordoned for targeted scale-down")
        for name in chosen
    ]
    left = {k: v for k, v in memory.idle_since.items() if k not in chosen}
    return _decision(o, Action.SCALE_DOWN, Reason.SCALE_DOWN, message, target,
                     replace(memory, idle_since=left), events,
                     scale_down=tuple(chosen))  # fmt: skip


def _idle(node: NodeState) -> bool:
    return node.ready and not node.cordoned and not node.marked and node.workload_pods == 0


def _remember_shortfall(o: Observed) -> Memory:
    memory = o.memory
    if o.cluster.allocated >= o.cluster.desired:
        return replace(memory, shortfall_since=None, hold_until=None)
    if memory.shortfall_since is None:
        return replace(memory, shortfall_since=o.now)
    return memory


def _cap_words(reason: Reason, o: Observed) -> str:
    if reason is Reason.MAX_PREEMPTIBLE_GPUS_REACHED:
        return f"--max-preemptible-gpus is {o.limits.max_gpus}"
    return f"--max-hourly-usd is {o.limits.max_hourly_usd}"


def _pod_event(pod: PendingPod, reason: Reason, message: str, warning: bool = True) -> Explanation:
    return Explanation(
        "Pod", pod.name, reason, message, namespace=pod.namespace, uid=pod.uid, warning=warning
    )


def _decision(
    o: Observed,
    action: Action,
    reason: Reason,
    message: str,
    target: int,
    memory: Memory,
    events: Sequence[Explanation] = (),
    pods: Sequence[PendingPod] = (),
    *,
    warning: bool = False,
    scale_down: tuple[str, ...] = (),
) -> Decision:
    """The decision, with the Events in ``events`` and one on each of ``pods``: every Event it
    means, each time. Which of them are written now (a pod is told a reason once, so many a
    scan) is the loop's recorder's (`together_autoscaler.recorder`), not the decision's."""
    return Decision(
        action=action,
        reason=reason,
        message=message,
        target=target,
        memory=memory,
        pending_gpus=sum(p.gpus for p in o.pending if p.needs_preemptible),
        scale_down_nodes=scale_down,
        events=(*events, *(_pod_event(p, reason, message, warning) for p in pods)),
    )
