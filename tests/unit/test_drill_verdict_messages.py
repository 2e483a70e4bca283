"""Every word of the drill's problems: the sentence a user reads for each way a reclaimed pod
breaks the contract, with its parts (how long, why, which index) chosen from what was seen; and
what makes a Job complete."""

from __future__ import annotations

from dataclasses import replace

import pytest

from together_sim.drill.verdict import (
    FIXES,
    Code,
    JobSeen,
    PodSeen,
    ReclaimSeen,
    pod_problems,
    verdict,
)

WINDOW = 300.0
POD = PodSeen(
    pod="sweep-0-aaaa",
    node="gpu-preemptible-1",
    index="0",
    grace_seconds=300,
    sigterm_delivered=True,
    exit_code=143,
    sigterm_to_exit_seconds=0.4,
    counted_success=False,
)
KILLED = replace(POD, exit_code=137, sigterm_to_exit_seconds=300.2)


def _message(pod: PodSeen, code: Code) -> str:
    found = [p.message for p in pod_problems(pod, WINDOW) if p.code is code]
    assert len(found) == 1, pod_problems(pod, WINDOW)
    fix = f" (fix: {FIXES[code]})"
    assert found[0].endswith(fix)
    return found[0].removesuffix(fix)


def test_a_grace_period_longer_than_the_drain_window() -> None:
    assert _message(replace(POD, grace_seconds=600), Code.GRACE_EXCEEDS_WINDOW) == (
        "sweep-0-aaaa asks for terminationGracePeriodSeconds=600, longer than the 300 s drain "
        "window, so Together removes its node before the grace period ends"
    )


def test_a_checkpoint_cut_short_in_place() -> None:
    pod = replace(KILLED, shrunk_files=("0/model.ckpt", "0/optim.ckpt"))
    assert _message(pod, Code.PARTIAL_CHECKPOINT) == (
        "sweep-0-aaaa was killed while writing 0/model.ckpt, 0/optim.ckpt in place, which is "
        "left partial under its final name for the next pod to load"
    )


@pytest.mark.parametrize(
    ("pod", "sentence"),
    [
        (
            KILLED,
            "sweep-0-aaaa was killed by force after 300.2 s at the end of its 300 s grace period "
            "(it had not exited after SIGTERM), so nothing after its last checkpoint was saved",
        ),
        (
            replace(KILLED, saving_when_killed=True, sigterm_to_exit_seconds=None),
            "sweep-0-aaaa was killed by force at the end of its 300 s grace period (its save was "
            "still running), so nothing after its last checkpoint was saved",
        ),
    ],
)
def test_a_pod_killed_by_force(pod: PodSeen, sentence: str) -> None:
    assert _message(pod, Code.SIGTERM_IGNORED) == sentence


@pytest.mark.parametrize(
    ("pod", "what"),
    [
        (replace(POD, exit_code=0), "index 0"),
        (replace(POD, exit_code=0, index=None), "its work"),
        (replace(POD, exit_code=143, counted_success=True), "index 0"),  # counted all the same
    ],
)
def test_a_pod_that_ended_succeeded_after_the_reclaim(pod: PodSeen, what: str) -> None:
    assert _message(pod, Code.EXIT_ZERO_ON_RECLAIM) == (
        f"sweep-0-aaaa exited 0 after SIGTERM, so it ended Succeeded and the Job counted {what} "
        "as done although the work was cut short"
    )


def test_a_pod_that_exited_1_was_not_counted_done() -> None:
    assert pod_problems(replace(POD, exit_code=1), WINDOW) == []


def test_a_job_completes_only_with_every_completion_and_no_failure() -> None:
    reclaim = [ReclaimSeen("n", 1.0, (POD,))]
    assert verdict(reclaim, JobSeen("sweep", 2, 2), WINDOW).completed
    assert not verdict(reclaim, JobSeen("sweep", 2, 1), WINDOW).completed
    failed = verdict(reclaim, JobSeen("sweep", 2, 2, failed_reason="BackoffLimitExceeded"), WINDOW)
    assert not failed.completed and not failed.safe


def test_a_drill_that_stopped_no_pod_says_what_to_change() -> None:
    result = verdict([ReclaimSeen("n", 1.0, ())], JobSeen("sweep", 2, 2), WINDOW)
    assert not result.safe and result.completed
    assert result.notes == (
        "no reclaim stopped a running pod, so the drill proved nothing; use --at with earlier "
        "times, or a longer-running workload",
    )
