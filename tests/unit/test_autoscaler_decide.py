"""`together_autoscaler.decide`: the pure decision, played through scans without Kubernetes."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from together_autoscaler.decide import budget_ceiling, decide, nodes_missing
from together_autoscaler.model import (
    Action,
    ClusterState,
    Explanation,
    Limits,
    Memory,
    NodeState,
    Observed,
    PendingPod,
    Reason,
)

LIMITS = Limits(min_gpus=0, max_gpus=64, unneeded_seconds=600, provision_timeout_seconds=900)


BUSY = tuple(NodeState(f"busy-{i}", 8, used_gpus=8, workload_pods=1) for i in range(3))


def pod(i: int, gpus: int = 8, *, needs: bool = True, may: bool = True) -> PendingPod:
    return PendingPod("default", f"job-{i}", f"uid-{i}", gpus, needs, may)


def observed(
    desired: int = 0,
    allocated: int | None = None,
    *,
    nodes: tuple[NodeState, ...] = (),
    pending: tuple[PendingPod, ...] = (),
    now: float = 1000.0,
    limits: Limits = LIMITS,
    memory: Memory | None = None,
) -> Observed:
    return Observed(
        now=now,
        cluster=ClusterState(desired, desired if allocated is None else allocated, 8),
        limits=limits,
        nodes=nodes,
        pending=pending,
        memory=memory or Memory(),
    )


def test_a_burst_of_three_8_gpu_pods_raises_the_target_from_0_to_24_at_once() -> None:
    decision = decide(observed(pending=tuple(pod(i) for i in range(3))))
    assert (decision.action, decision.target, decision.pending_gpus) == (Action.SCALE_UP, 24, 24)
    assert {e.name for e in decision.events} == {"job-0", "job-1", "job-2"}
    assert all(e.reason == "TriggeredScaleUp" for e in decision.events)


def test_requests_are_packed_onto_8_gpu_nodes_largest_first() -> None:
    assert nodes_missing([pod(i, 4) for i in range(6)], (), 0) == 3
    assert nodes_missing([pod(0, 5), pod(1, 3), pod(2, 4), pod(3, 4)], (), 0) == 2
    assert nodes_missing([pod(0, 1)] * 9, (), 0) == 2


def test_pods_that_do_not_need_preemptible_nodes_are_no_demand() -> None:
    decision = decide(observed(pending=(pod(0, needs=False),)))
    assert (decision.action, decision.target) == (Action.NONE, 0)


def test_capacity_on_its_way_is_subtracted() -> None:
    busy = NodeState("a", 8, used_gpus=8, workload_pods=1)
    joining = NodeState("b", 8, ready=False)
    pending = tuple(pod(i) for i in range(4))
    # desired 24, allocated 16: one node not allocated yet, one not Ready, one full: 2 missing.
    decision = decide(observed(24, 16, nodes=(busy, joining), pending=pending))
    assert (decision.action, decision.target) == (Action.SCALE_UP, 40)


def test_gpus_together_allocated_before_kubernetes_shows_their_node_are_on_their_way() -> None:
    busy = NodeState("a", 8, used_gpus=8, workload_pods=1)
    # desired 24, allocated 16, but only one Node registered yet: two nodes' worth to come.
    decision = decide(observed(24, 16, nodes=(busy,), pending=(pod(1), pod(2))))
    assert decision.action is Action.NONE and decision.target == 24


def test_free_gpus_on_ready_nodes_take_pods_before_new_nodes() -> None:
    half = NodeState("a", 8, used_gpus=4, workload_pods=1)
    decision = decide(observed(8, nodes=(half,), pending=(pod(0, 4),)))
    assert decision.action is Action.NONE and decision.target == 8


def test_pods_evicted_by_a_reclaim_wait_for_the_refill_not_a_raise() -> None:
    reclaimed = NodeState("a", 8, cordoned=True, reclaimed=True)
    decision = decide(observed(8, nodes=(reclaimed,), pending=(pod(0),)))
    assert decision.action is Action.NONE and decision.target == 8


def test_the_raise_is_capped_at_the_maximum_and_said_so() -> None:
    limits = replace(LIMITS, max_gpus=16)
    decision = decide(observed(pending=tuple(pod(i) for i in range(3)), limits=limits))
    assert (decision.action, decision.target) == (Action.SCALE_UP, 16)
    assert "--max-preemptible-gpus is 16" in decision.message
    at_max = decide(observed(16, pending=tuple(pod(i) for i in range(3)), limits=limits))
    assert (at_max.action, at_max.reason, at_max.target) == (
        Action.HOLD,
        "MaxPreemptibleGpusReached",
        16,
    )
    assert all(e.warning for e in at_max.events)


def test_the_raise_is_capped_at_the_hourly_budget() -> None:
    # 8 standard GPUs at $2 = $16/h; preemptible at $1/GPU-h: $40 leaves room for 24.
    limits = replace(LIMITS, max_hourly_usd=40.0, on_demand_rate=2.0)
    assert budget_ceiling(observed(limits=limits)) == 24
    decision = decide(observed(pending=tuple(pod(i) for i in range(5)), limits=limits))
    assert (decision.action, decision.target) == (Action.SCALE_UP, 24)
    assert "--max-hourly-usd is 40.0" in decision.message


def test_a_target_below_the_minimum_is_raised_to_it() -> None:
    decision = decide(observed(0, limits=replace(LIMITS, min_gpus=16)))
    assert (decision.action, decision.reason, decision.target) == (
        Action.SCALE_UP,
        "BelowMinimum",
        16,
    )


def test_a_pod_larger_than_a_node_is_told_so_and_adds_nothing() -> None:
    decision = decide(observed(pending=(pod(0, 16),)))
    assert decision.target == 0
    [event] = decision.events
    assert event.reason == "NotTriggerScaleUp" and "a preemptible node has 8" in event.message


def test_the_decision_explains_every_pod_each_scan_and_leaves_the_throttling_to_the_recorder() -> (
    None
):
    too_big = tuple(pod(i, 16) for i in range(100))
    first = decide(observed(pending=too_big))
    assert len(first.events) == 100 and {e.reason for e in first.events} == {"NotTriggerScaleUp"}
    assert decide(observed(pending=too_big, memory=first.memory)).events == first.events


def test_scarcity_holds_the_target_and_retries_later() -> None:
    first = decide(observed(24, 8, nodes=BUSY[:1], pending=(pod(0), pod(1)), now=0))
    assert first.action is Action.NONE  # the shortfall is on its way, nothing to add yet
    pending = (pod(0), pod(1), pod(2))  # one more pod, after the provisioning timeout
    short = decide(observed(24, 8, nodes=BUSY[:1], pending=pending, now=901, memory=first.memory))
    assert (short.action, short.reason, short.target) == (Action.HOLD, "ScaleUpScarcity", 24)
    assert {e.name for e in short.events} == {p.name for p in pending}
    assert "allocated 8 of the 24" in short.message and "8 more GPUs" in short.message
    again = decide(observed(24, 8, nodes=BUSY[:1], pending=pending, now=1200, memory=short.memory))
    assert (
        again.action is Action.HOLD
    )  # the recorder tells the pods once (test_autoscaler_recorder)
    retry = decide(observed(24, 8, nodes=BUSY[:1], pending=pending, now=1802, memory=again.memory))
    assert (retry.action, retry.target) == (Action.SCALE_UP, 32)


def test_a_filled_target_ends_the_shortfall() -> None:
    memory = Memory(shortfall_since=0.0, hold_until=5000.0)
    decision = decide(observed(24, 24, nodes=BUSY, pending=(pod(0),), now=2000, memory=memory))
    assert decision.memory.hold_until is None and decision.memory.shortfall_since is None
    assert (decision.action, decision.target) == (Action.SCALE_UP, 32)


def idle_history(*nodes: NodeState, desired: int, start: float = 0.0, **kw: object) -> Memory:
    """The memory after a first scan saw ``nodes`` at ``start``."""
    first = decide(observed(desired, nodes=nodes, now=start, **kw))  # type: ignore[arg-type]
    return first.memory


def test_a_node_idle_for_the_unneeded_window_is_named_and_the_target_drops_by_its_gpus() -> None:
    idle, busy = NodeState("idle", 8), NodeState("busy", 8, used_gpus=8, workload_pods=1)
    memory = idle_history(idle, busy, desired=16)
    early = decide(observed(16, nodes=(idle, busy), now=599, memory=memory))
    assert early.action is Action.NONE and early.target == 16
    due = decide(observed(16, nodes=(idle, busy), now=600, memory=memory))
    assert (due.action, due.target, due.scale_down_nodes) == (Action.SCALE_DOWN, 8, ("idle",))
    assert [(e.kind, e.name, e.reason) for e in due.events] == [("Node", "idle", "ScaleDown")]


def test_three_nodes_idle_past_the_window_go_in_one_decision() -> None:
    nodes = tuple(NodeState(f"idle-{i}", 8) for i in range(3))
    memory = idle_history(*nodes, desired=24)
    decision = decide(observed(24, nodes=nodes, now=600, memory=memory))
    assert (decision.action, decision.target) == (Action.SCALE_DOWN, 0)  # -24 in one PUT
    assert sorted(decision.scale_down_nodes) == ["idle-0", "idle-1", "idle-2"]


def test_a_node_that_ran_a_pod_in_between_starts_its_window_again() -> None:
    idle, busy = NodeState("a", 8), NodeState("a", 8, used_gpus=8, workload_pods=1)
    memory = idle_history(idle, desired=8)
    memory = decide(observed(8, nodes=(busy,), now=300, memory=memory)).memory
    memory = decide(observed(8, nodes=(idle,), now=400, memory=memory)).memory
    assert decide(observed(8, nodes=(idle,), now=900, memory=memory)).action is Action.NONE
    assert decide(observed(8, nodes=(idle,), now=1000, memory=memory)).target == 0


def test_scale_down_never_goes_below_the_minimum() -> None:
    limits = replace(LIMITS, min_gpus=8)
    nodes = (NodeState("a", 8), NodeState("b", 8))
    memory = idle_history(*nodes, desired=16, limits=limits)
    decision = decide(observed(16, nodes=nodes, now=700, memory=memory, limits=limits))
    assert (decision.target, len(decision.scale_down_nodes)) == (8, 1)
    floor = decide(observed(8, nodes=nodes[:1], now=700, memory=memory, limits=limits))
    assert (floor.action, floor.reason, floor.target) == (Action.NONE, "ScaleDownMinimum", 8)


def test_scale_down_waits_while_a_pending_pod_would_fit_on_the_idle_node() -> None:
    idle = NodeState("a", 8)
    memory = idle_history(idle, desired=8)
    standard_only = pod(0, 4, needs=False, may=False)
    assert decide(observed(8, nodes=(idle,), pending=(standard_only,), now=700,
                           memory=memory)).target == 0  # fmt: skip
    either = pod(1, 4, needs=False, may=True)
    decision = decide(observed(8, nodes=(idle,), pending=(either,), now=700, memory=memory))
    assert (decision.action, decision.reason, decision.target) == (
        Action.HOLD,
        "ScaleDownPendingPods",
        8,
    )


def test_scale_down_waits_while_together_is_short_of_the_target() -> None:
    idle = NodeState("a", 8)
    memory = idle_history(idle, desired=16)
    decision = decide(observed(16, 8, nodes=(idle,), now=700, memory=memory))
    assert (decision.reason, decision.target) == ("ScaleDownShortfall", 16)


def test_scale_down_waits_while_a_reclaim_drains_a_node() -> None:
    # Allocated still counts the draining node, so it is no shortfall; lowering the target now
    # would cancel the refill (Together counts only undrained nodes) and strand the marked node.
    idle, busy = NodeState("a", 8), NodeState("b", 8, used_gpus=8, workload_pods=1)
    reclaimed = NodeState("r", 8, cordoned=True, reclaimed=True)
    memory = idle_history(idle, desired=24)
    decision = decide(observed(24, nodes=(idle, busy, reclaimed), now=700, memory=memory))
    assert (decision.action, decision.reason, decision.target) == (
        Action.HOLD,
        "ScaleDownReclaim",
        24,
    )
    assert decision.scale_down_nodes == ()
    after = decide(observed(24, nodes=(idle, busy, NodeState("r2", 8)), now=700, memory=memory))
    assert (after.reason, after.target, after.scale_down_nodes) == ("ScaleDown", 16, ("a",))


def test_cordoned_marked_and_busy_nodes_are_never_named() -> None:
    nodes = (
        NodeState("cordoned", 8, cordoned=True),
        NodeState("marked", 8, cordoned=True, marked=True),
        NodeState("daemonset-only", 8, used_gpus=0, workload_pods=0, ready=False),
        NodeState("busy", 8, used_gpus=0, workload_pods=1),
    )
    memory = idle_history(*nodes, desired=32)
    decision = decide(observed(32, nodes=nodes, now=10_000, memory=memory))
    assert decision.scale_down_nodes == () and decision.target == 32


# --- whole decisions: the message, the memory and every Event a scan hands on -------------------


def test_a_scale_down_reads_in_full_and_forgets_the_nodes_it_named() -> None:
    idle, other = NodeState("idle", 8), NodeState("later", 8)
    memory = Memory(idle_since={"idle": 50.0, "later": 500.0})
    decision = decide(observed(16, nodes=(idle, other), now=700, memory=memory))
    message = "1 preemptible node(s) without workload pods for 650 s: target 16 -> 8"
    assert (decision.action, decision.reason, decision.message) == (
        Action.SCALE_DOWN,
        "ScaleDown",
        message,
    )
    assert decision.events == (
        Explanation(
            "Node", "idle", Reason.SCALE_DOWN, f"{message}; cordoned for targeted scale-down"
        ),
    )
    assert decision.memory.idle_since == {"later": 500.0}
    # Events of pods too big for a node come first, and stay.
    with_big = decide(observed(16, nodes=(idle, other), pending=(pod(9, 16),), now=700,
                               memory=memory))  # fmt: skip
    assert [e.kind for e in with_big.events] == ["Pod", "Node"]


@pytest.mark.parametrize(
    ("kwargs", "reason", "message"),
    [
        ({}, "NoChange", "nothing to do"),
        (
            {"pending": (pod(1, 4, needs=False),)},
            "ScaleDownPendingPods",
            "1 pending pod(s) would fit on the idle node(s); keeping them",
        ),
        (
            {"allocated": 8},
            "ScaleDownShortfall",
            "Together is short of the target (8 of 16): lowering it would not remove the idle "
            "node(s)",
        ),
        (
            {
                "nodes": (
                    NodeState("a", 8),
                    NodeState("r1", 8, cordoned=True, reclaimed=True),
                    NodeState("r2", 8, cordoned=True, reclaimed=True),
                )
            },
            "ScaleDownReclaim",
            "a reclaim is draining r1, r2: Together refills toward the target, and lowering it "
            "now would cancel the refill, not remove the idle node(s)",
        ),
        (
            {"limits": replace(LIMITS, min_gpus=16)},
            "ScaleDownMinimum",
            "idle node(s) kept: the target 16 is at the minimum",
        ),
    ],
)
def test_each_reason_to_keep_the_target_reads_in_full_and_keeps_the_memory(
    kwargs: dict[str, Any], reason: str, message: str
) -> None:
    # The parameters are shared by every run of the test in this process: read, never popped.
    # A pod too big for any node is told so whatever else is decided.
    too_big = pod(9, 16)
    kwargs = {"nodes": (NodeState("a", 8),), **kwargs}
    kwargs["pending"] = (*kwargs.get("pending", ()), too_big)
    memory = Memory(idle_since={"a": 0.0}) if reason != "NoChange" else Memory()
    now = 700 if reason != "NoChange" else 100
    decision = decide(observed(16, now=now, memory=memory, **kwargs))
    assert (decision.reason, decision.message, decision.target) == (reason, message, 16)
    assert decision.action is (
        Action.NONE if reason in ("NoChange", "ScaleDownMinimum") else Action.HOLD
    )
    assert [(e.name, e.reason) for e in decision.events] == [("job-9", "NotTriggerScaleUp")]
    assert decision.memory.idle_since == {"a": 0.0 if reason != "NoChange" else 100}


def test_pods_are_told_the_decision_with_their_namespace_and_uid() -> None:
    decision = decide(observed(pending=(pod(0),)))
    assert decision.events == (
        Explanation(
            "Pod",
            "job-0",
            Reason.TRIGGERED_SCALE_UP,
            "1 pending pod(s) need 1 more preemptible node(s): target 0 -> 8",
            namespace="default",
            uid="uid-0",
            warning=False,
        ),
    )
    too_big = decide(observed(pending=(pod(1, 16),))).events[0]
    assert (too_big.namespace, too_big.uid, too_big.warning) == ("default", "uid-1", True)


def test_a_raise_capped_short_of_the_need_says_by_what() -> None:
    limits = replace(LIMITS, max_gpus=16)
    decision = decide(observed(pending=tuple(pod(i) for i in range(3)), limits=limits))
    assert decision.message == (
        "3 pending pod(s) need 3 more preemptible node(s): target 0 -> 16 "
        "(capped: --max-preemptible-gpus is 16)"
    )
    at_max = decide(observed(16, pending=tuple(pod(i) for i in range(3)), limits=limits))
    assert at_max.message == (
        "1 more preemptible node(s) needed, but the target 16 may not grow: "
        "--max-preemptible-gpus is 16"
    )
    assert {(e.message, e.warning) for e in at_max.events} == {(at_max.message, True)}


def test_a_raise_to_exactly_the_maximum_or_the_budget_is_not_capped() -> None:
    exact = decide(observed(pending=(pod(0), pod(1)), limits=replace(LIMITS, max_gpus=16)))
    assert (exact.target, exact.message) == (
        16,
        "2 pending pod(s) need 2 more preemptible node(s): target 0 -> 16",
    )
    budget = replace(LIMITS, max_hourly_usd=40.0, on_demand_rate=2.0)  # room for 24
    assert "capped" not in decide(observed(pending=(pod(0), pod(1), pod(2)), limits=budget)).message


def test_a_budget_spent_by_the_standard_gpus_holds_the_target_where_it_is() -> None:
    # $16/h of standard GPUs alone use a $20 budget: the ceiling is 0, the minimum 8, desired 16.
    limits = replace(LIMITS, min_gpus=8, max_hourly_usd=20.0, on_demand_rate=2.0)
    held = decide(observed(16, nodes=BUSY[:2], pending=(pod(0),), limits=limits))
    assert (held.action, held.reason, held.target) == (Action.HOLD, "MaxHourlyUsdReached", 16)
    assert held.message.endswith("may not grow: --max-hourly-usd is 20.0")
    assert budget_ceiling(observed(limits=replace(LIMITS, on_demand_rate=2.0))) is None
    assert budget_ceiling(observed(limits=replace(LIMITS, max_hourly_usd=40.0))) is None


def test_a_scarcity_hold_reads_in_full_and_restarts_the_shortfall_clock_at_its_end() -> None:
    memory = Memory(shortfall_since=0.0)
    held = decide(observed(24, 8, nodes=BUSY[:1], pending=(pod(0), pod(1), pod(2)), now=1000,
                           memory=memory))  # fmt: skip
    assert held.message == (
        "Together has allocated 8 of the 24 preemptible GPUs asked for, for over 900 s (scarce "
        "capacity): not raising the target; 8 more GPUs would be needed; retrying in 900 s"
    )
    assert held.memory.hold_until == 1900.0 and held.memory.shortfall_since == 1900.0
    assert all(e.warning and e.message == held.message for e in held.events)
    # Nothing missing: no GPUs named. The hold lasts until its end, and not a second more.
    covered = decide(observed(24, 8, nodes=BUSY[:1], pending=(pod(0),), now=1000, memory=memory))
    assert covered.message.endswith("not raising the target; retrying in 900 s")
    during = decide(observed(24, 8, nodes=BUSY[:1], pending=(pod(0),), now=1899,
                             memory=held.memory))  # fmt: skip
    assert during.reason == "ScaleUpScarcity" and during.message.endswith("retrying in 1 s")
    ended = decide(observed(24, 8, nodes=BUSY[:1], pending=(pod(0), pod(1), pod(2)), now=1900,
                            memory=held.memory))  # fmt: skip
    assert ended.reason == "TriggeredScaleUp"


def test_a_shortfall_exactly_as_long_as_the_timeout_is_not_yet_scarcity() -> None:
    memory = Memory(shortfall_since=100.0)
    pending = (pod(0), pod(1), pod(2))
    at = decide(observed(24, 8, nodes=BUSY[:1], pending=pending, now=1000, memory=memory))
    assert at.reason == "TriggeredScaleUp"
    past = decide(observed(24, 8, nodes=BUSY[:1], pending=pending, now=1001, memory=memory))
    assert past.reason == "ScaleUpScarcity"


def test_raising_to_the_minimum_says_so_and_keeps_the_memory() -> None:
    memory = Memory(idle_since={"a": 5.0})
    decision = decide(observed(0, nodes=(NodeState("a", 8),), now=10, memory=memory,
                               limits=replace(LIMITS, min_gpus=16)))  # fmt: skip
    assert decision.message == "target 0 is below the minimum 16"
    assert decision.memory.idle_since == {"a": 5.0}


def test_marked_nodes_are_neither_room_nor_shown_and_full_nodes_give_no_room() -> None:
    marked = NodeState("m", 8, cordoned=True, marked=True)
    full = NodeState("f", 8, used_gpus=8, workload_pods=1)
    overfull = NodeState("o", 8, used_gpus=9, workload_pods=1)
    # desired 16 with a marked node and a full one: one node of the target is still to come.
    assert nodes_missing([pod(0), pod(1)], (marked, full), 16) == 1
    assert nodes_missing([pod(0), pod(1)], (full, marked), 16) == 1
    assert nodes_missing([pod(0, 1)], (overfull,), 8) == 1
    assert nodes_missing([pod(0, 1)], (), 7) == 1  # 7 GPUs of target make no node


def test_a_pending_pod_of_a_whole_node_that_may_use_it_keeps_the_idle_node() -> None:
    memory = Memory(idle_since={"a": 0.0})
    either = pod(1, 8, needs=False, may=True)
    decision = decide(observed(8, nodes=(NodeState("a", 8),), pending=(either,), now=700,
                               memory=memory))  # fmt: skip
    assert (decision.reason, decision.target) == ("ScaleDownPendingPods", 8)
