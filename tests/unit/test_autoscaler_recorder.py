"""`together_autoscaler.recorder`: which of the decisions' Events the loop writes, played through
scans of the pure decision (as Karpenter's recorder, it de-duplicates outside the decision)."""

from __future__ import annotations

from together_autoscaler import model
from together_autoscaler.decide import decide
from together_autoscaler.model import Explanation, Memory, PendingPod, Reason
from together_autoscaler.recorder import MAX_POD_EVENTS, Recorder

LIMITS = model.Limits(min_gpus=0, max_gpus=64, unneeded_seconds=600, provision_timeout_seconds=900)
BUSY = (model.NodeState("busy", 8, used_gpus=8, workload_pods=1),)


def pod(i: int, gpus: int = 8) -> PendingPod:
    return PendingPod("default", f"job-{i}", f"uid-{i}", gpus, True, True)


def observed(
    desired: int, allocated: int, pending: tuple[PendingPod, ...], now: float, memory: Memory
) -> model.Observed:
    return model.Observed(
        now, model.ClusterState(desired, allocated, 8), LIMITS, BUSY, pending, memory
    )


def recorder() -> tuple[Recorder, list[Explanation]]:
    written: list[Explanation] = []
    return Recorder(written.append, lambda error: None), written


def test_pod_events_are_capped_per_scan_whatever_their_reason() -> None:
    record, written = recorder()
    too_big = tuple(pod(i, 16) for i in range(100))
    decision = decide(observed(0, 0, too_big, 0, Memory()))
    record.record(decision.events, too_big)
    first = list(written)
    assert len(first) == MAX_POD_EVENTS and {e.reason for e in first} == {"NotTriggerScaleUp"}
    record.record(decision.events, too_big)
    second = written[len(first) :]
    assert len(second) == MAX_POD_EVENTS  # the next pods, not the same ones again
    assert not {e.name for e in first} & {e.name for e in second}


def test_a_scarcity_hold_tells_each_pod_once_and_a_pod_pending_again_anew() -> None:
    record, written = recorder()
    pending = (pod(0), pod(1), pod(2))
    first = decide(observed(24, 8, pending[:2], 0, Memory()))
    short = decide(observed(24, 8, pending, 901, first.memory))
    record.record(short.events, pending)
    assert {(e.name, e.reason) for e in written} == {(p.name, "ScaleUpScarcity") for p in pending}
    again = decide(observed(24, 8, pending, 1200, short.memory))
    assert again.events  # the decision says it again: it stays pure
    written.clear()
    record.record(again.events, pending)
    assert written == []  # said once, not every scan
    record.record((), pending[1:])  # job-0 ran, then came back pending
    record.record(again.events, pending)
    assert [e.name for e in written] == ["job-0"]


def test_node_events_are_always_written_and_a_failed_write_does_not_stop_the_rest() -> None:
    failures: list[Exception] = []
    written: list[Explanation] = []

    def write(event: Explanation) -> None:
        if event.name == "a":
            raise RuntimeError("the API server is away")
        written.append(event)

    record = Recorder(write, failures.append)
    nodes = [Explanation("Node", name, Reason.SCALE_DOWN, "idle") for name in ("a", "b")]
    record.record(nodes, ())
    record.record(nodes, ())
    assert [e.name for e in written] == ["b", "b"] and len(failures) == 2
