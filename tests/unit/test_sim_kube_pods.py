"""How the simulator's Kubernetes side ends pods, as pure decisions over its clock
(`together_sim.plane.pods.next_step`): the drain sequence and every end state, with no API server.

The engine tests (tests/integration/test_kubernetes_sim.py) watch the same pods end on a real one.
"""

from __future__ import annotations

from typing import Any

import pytest

from together_sim.plane.pods import (
    DEFAULT_RUN_SECONDS,
    EXIT_AT,
    EXIT_CODE,
    RUN_SECONDS,
    SIGTERM_SECONDS,
    STARTED_AT,
    STOPPING,
    Act,
    PodStep,
    next_step,
    removed_exit_code,
)

NODE = "gpu-preemptible-dp-1"
T0 = 1000.0
"""The simulated time the node's drain starts."""


def pod(
    *,
    restart: str = "Never",
    job: bool = True,
    phase: str = "Running",
    node: str | None = NODE,
    grace: int | None = None,
    finalizers: tuple[str, ...] = (),
    notes: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A pod as the API server returns it; ``notes``: its together-sim/ annotations."""
    spec: dict[str, Any] = {"restartPolicy": restart, "containers": [{"name": "main"}]}
    if node is not None:
        spec["nodeName"] = node
    if grace is not None:
        spec["terminationGracePeriodSeconds"] = grace
    meta: dict[str, Any] = {
        "name": "p",
        "namespace": "default",
        "resourceVersion": "7",
        "annotations": dict(notes or {}),
        "finalizers": list(finalizers),
        "ownerReferences": [{"kind": "Job", "name": "train"}] if job else [],
    }
    return {"metadata": meta, "spec": spec, "status": {"phase": phase}}


def held(step: PodStep, phase: str = "Running") -> dict[str, Any]:
    """The pod after a STOP: our finalizer, and the exit it was given."""
    assert step.act is Act.STOP
    notes = {EXIT_AT: repr(step.exit_at), EXIT_CODE: str(step.code)}
    return pod(phase=phase, finalizers=(STOPPING,), notes=notes)


DRAINING = {NODE: T0}


def test_a_drained_pod_exits_143_when_its_process_does_then_is_released() -> None:
    running = pod(grace=30, notes={STARTED_AT: repr(T0 - 10), SIGTERM_SECONDS: "20"})
    assert next_step(T0 - 1, running, {}).act is Act.WAIT  # still working
    stop = next_step(T0, running, DRAINING)
    assert stop == PodStep(Act.STOP, code=143, exit_at=T0 + 20, grace=30)
    assert next_step(T0 + 19, held(stop), DRAINING).act is Act.WAIT  # SIGTERM handler runs
    assert next_step(T0 + 20, held(stop), DRAINING) == PodStep(Act.EXIT, code=143)
    assert next_step(T0 + 20, held(stop, phase="Failed"), DRAINING).act is Act.RELEASE


@pytest.mark.parametrize(
    ("grace", "sigterm", "code", "exits_after"),
    [
        (30, "0", 143, 0),  # exits at once on SIGTERM
        (30, "45", 137, 30),  # slower than its grace period: killed when it runs out
        (600, "400", 137, 300),  # its own grace is capped at the 300 s drain window
        (600, "250", 143, 250),
        (None, "31", 137, 30),  # Kubernetes' default grace period, 30 s
    ],
)
def test_the_exit_code_and_time_follow_the_grace_period_and_the_drain_window(
    grace: int | None, sigterm: str, code: int, exits_after: float
) -> None:
    running = pod(grace=grace, notes={STARTED_AT: repr(T0 - 10), SIGTERM_SECONDS: sigterm})
    stop = next_step(T0 + 5, running, DRAINING)  # noticed late: the exit counts from T+0
    assert (stop.act, stop.code, stop.exit_at) == (Act.STOP, code, T0 + exits_after)
    assert stop.grace == min(grace or 30, 300)


def test_a_job_pod_notes_its_start_then_succeeds_after_its_run_seconds() -> None:
    fresh = pod(notes={RUN_SECONDS: "120"})
    assert next_step(T0, fresh, {}).act is Act.START
    started = pod(notes={RUN_SECONDS: "120", STARTED_AT: repr(T0)})
    assert next_step(T0 + 119, started, {}).act is Act.WAIT
    assert next_step(T0 + 120, started, {}).act is Act.SUCCEED
    default = pod(notes={STARTED_AT: repr(T0)})  # a Job's pod without the annotation: one minute
    assert next_step(T0 + DEFAULT_RUN_SECONDS - 1, default, {}).act is Act.WAIT
    assert next_step(T0 + DEFAULT_RUN_SECONDS, default, {}).act is Act.SUCCEED


def test_work_done_before_the_drain_succeeds_however_late_it_is_noticed() -> None:
    done_before = pod(notes={RUN_SECONDS: "50", STARTED_AT: repr(T0 - 60)})
    assert next_step(T0 + 100, done_before, DRAINING).act is Act.SUCCEED
    done_after = pod(notes={RUN_SECONDS: "70", STARTED_AT: repr(T0 - 60)})
    assert next_step(T0 + 100, done_after, DRAINING).act is Act.STOP  # cut: never Succeeded


@pytest.mark.parametrize(
    "serving",
    [
        pod(restart="Always", job=False),  # a Deployment's pod runs until stopped
        pod(restart="Always", notes={RUN_SECONDS: "10"}),  # Always restarts: never done
        pod(restart="Never", job=False),  # a bare pod without run-seconds, too
        pod(restart="OnFailure", job=False),
    ],
    ids=["Always", "Always-with-run-seconds", "Never-no-job", "OnFailure-no-job"],
)
def test_a_pod_with_no_work_to_finish_runs_until_its_node_drains(serving: dict[str, Any]) -> None:
    for now in (T0, T0 + 10**6):
        assert next_step(now, serving, {}).act is Act.WAIT
    assert next_step(T0, serving, DRAINING).act is Act.STOP


def test_a_drain_stops_pods_not_started_yet_and_leaves_the_rest() -> None:
    assert next_step(T0, pod(), DRAINING).act is Act.STOP  # Running, its start not noted yet
    assert next_step(T0, pod(phase="Pending"), DRAINING).act is Act.STOP
    assert next_step(T0, pod(), {"another-node": T0}).act is Act.START
    for untouched in (
        pod(phase="Succeeded"),
        pod(phase="Failed"),
        pod(node=None),  # not scheduled
    ):
        assert next_step(T0, untouched, DRAINING).act is Act.WAIT
    deleting = pod()
    deleting["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    assert next_step(T0, deleting, DRAINING).act is Act.WAIT


def test_a_pod_still_on_a_removed_node_keeps_a_decided_exit_or_is_killed() -> None:
    assert removed_exit_code(pod()) == 137  # SIGKILL with the node
    assert removed_exit_code(pod(notes={EXIT_CODE: "143"})) == 143  # its drain decided already


def test_a_bad_run_seconds_annotation_falls_back_to_the_default() -> None:
    started = pod(notes={RUN_SECONDS: "soon", STARTED_AT: repr(T0)})
    assert next_step(T0 + DEFAULT_RUN_SECONDS, started, {}).act is Act.SUCCEED
