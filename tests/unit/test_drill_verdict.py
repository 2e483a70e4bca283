"""The drill's verdict as a pure function: one row per problem code and one per "safe" condition,
the unverified verdict, the JSON report's fields and the readable report, with no cluster."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from together_drill.report import as_json, readable
from together_drill.verdict import (
    EXIT_CODES,
    FIXES,
    Code,
    JobSeen,
    Outcome,
    PodSeen,
    ReclaimSeen,
    Save,
    job_problems,
    pod_problems,
    unseen_save,
    verdict,
)

WINDOW = 300.0
DONE = JobSeen("sweep", completions=2, succeeded=2)

GOOD = PodSeen(  # together_worker: checkpoint on SIGTERM, 143, the next pod resumes from it
    pod="sweep-0-aaaa",
    node="gpu-preemptible-1",
    index="0",
    grace_seconds=300,
    sigterm_delivered=True,
    exit_code=143,
    sigterm_to_exit_seconds=0.4,
    counted_success=False,
    uses_library=True,
    checkpointed_step=42,
    reached_step=42,
    next_pod="sweep-0-bbbb",
    next_resumed_from=42,
    checkpoint_every=10,
    save=Save.COMPLETED,
    save_source="status.json: a save begun after SIGTERM recorded done",
)
IGNORES = replace(  # no handler that exits: SIGKILL at the grace end
    GOOD,
    exit_code=137,
    sigterm_to_exit_seconds=300.2,
    uses_library=False,
    checkpointed_step=None,
    save=Save.UNSEEN,
)
EXITS_ZERO = replace(GOOD, exit_code=0, counted_success=True, uses_library=False, next_pod=None)
SHELL_WRAPPED = replace(IGNORES, pod="sweep-0-shell")  # sh as PID 1 swallowed SIGTERM
IN_PLACE = replace(IGNORES, shrunk_files=("0/model.ckpt",))  # killed mid-write, in place
CUT_SHORT = replace(  # torchrun's early SIGKILL: exit 1 after 2.7 s of a 300 s grace, mid-save
    GOOD,
    exit_code=1,
    sigterm_to_exit_seconds=2.7,
    uses_library=False,
    save=Save.CUT_SHORT,
    save_source="the volume: 0/state.json.tmp left unfinished",
    saving_when_killed=True,  # as evidence.judge_save says of any save cut short
)
COUNTED = replace(GOOD, counted_as_failure=True)  # no podFailurePolicy: backoffLimit used up


def _codes(*pods: PodSeen, job: JobSeen = DONE) -> list[Code]:
    result = verdict([ReclaimSeen("gpu-preemptible-1", 12.0, pods, 31.0)], job, WINDOW)
    return [p.code for p in result.problems]


def test_a_workload_that_keeps_the_contract_is_safe() -> None:
    result = verdict([ReclaimSeen("n", 12.0, (GOOD,), 31.0)], DONE, WINDOW)
    assert result.safe and result.completed and result.problems == ()
    assert GOOD.resumed is True and GOOD.work_redone == 0 and GOOD.checkpoint_written is True


@pytest.mark.parametrize(
    ("pod", "codes"),
    [
        (IGNORES, [Code.SIGTERM_IGNORED]),
        (EXITS_ZERO, [Code.EXIT_ZERO_ON_RECLAIM]),
        (SHELL_WRAPPED, [Code.SIGTERM_IGNORED]),
        (IN_PLACE, [Code.PARTIAL_CHECKPOINT]),
    ],
    ids=["ignores-sigterm", "exits-0", "shell-wrapper", "in-place-checkpoint"],
)
def test_the_four_unsafe_workloads_get_their_code(pod: PodSeen, codes: list[Code]) -> None:
    assert _codes(pod) == codes
    result = verdict([ReclaimSeen("n", 1.0, (pod,))], DONE, WINDOW)
    assert not result.safe and result.completed  # unsafe even though the Job completed


def test_each_problem_is_one_sentence_with_its_fix() -> None:
    for pod in (IGNORES, EXITS_ZERO, IN_PLACE):
        (problem,) = pod_problems(pod, WINDOW)
        assert problem.pod == pod.pod
        assert problem.message.startswith(pod.pod)
        assert problem.message.endswith(f"(fix: {FIXES[problem.code]})")
        assert problem.message.count(". ") == 0  # one sentence
    assert set(FIXES) == set(Code)


PROBLEM_ROWS = [
    (IGNORES, [Code.SIGTERM_IGNORED]),
    (EXITS_ZERO, [Code.EXIT_ZERO_ON_RECLAIM]),
    (replace(EXITS_ZERO, exit_code=143), [Code.EXIT_ZERO_ON_RECLAIM]),  # Succeeded all the same
    (replace(EXITS_ZERO, counted_success=False), [Code.EXIT_ZERO_ON_RECLAIM]),  # exit 0 alone
    (replace(GOOD, grace_seconds=600), [Code.GRACE_EXCEEDS_WINDOW]),
    (replace(GOOD, next_resumed_from=None), [Code.NOT_RESUMED]),
    (IN_PLACE, [Code.PARTIAL_CHECKPOINT]),
    (CUT_SHORT, [Code.SAVE_CUT_SHORT]),
    (COUNTED, [Code.RECLAIM_COUNTED_AS_FAILURE]),
]


@pytest.mark.parametrize(
    ("pod", "codes"),
    PROBLEM_ROWS,
    ids=[
        "SIGTERM_IGNORED",
        "EXIT_ZERO_ON_RECLAIM",
        "EXIT_ZERO_ON_RECLAIM-succeeded",
        "EXIT_ZERO_ON_RECLAIM-exit-0",
        "GRACE_EXCEEDS_WINDOW",
        "NOT_RESUMED",
        "PARTIAL_CHECKPOINT",
        "SAVE_CUT_SHORT",
        "RECLAIM_COUNTED_AS_FAILURE",
    ],
)
def test_one_row_per_problem_code(pod: PodSeen, codes: list[Code]) -> None:
    result = verdict([ReclaimSeen("n", 1.0, (pod,))], DONE, WINDOW)
    assert [p.code for p in result.problems] == codes
    assert result.outcome is Outcome.UNSAFE and result.exit_code == 1


def test_every_code_has_a_row() -> None:
    rows = {c for _, codes in PROBLEM_ROWS for c in codes} | {Code.JOB_FAILED}
    assert rows == set(Code)


def test_a_save_cut_short_is_never_safe_whatever_else_looks_right() -> None:
    """The torchrun case: SIGTERM delivered, the pod ended well before its grace, the Job
    completed, yet the save the reclaim asked for was cut short."""
    tidy = replace(CUT_SHORT, exit_code=143, uses_library=True, next_resumed_from=42)
    result = verdict([ReclaimSeen("n", 1.0, (tidy,))], DONE, WINDOW)
    assert [p.code for p in result.problems] == [Code.SAVE_CUT_SHORT]
    assert not result.safe
    (problem,) = result.problems
    assert "ended 2.7 s after SIGTERM, before its 300 s grace period" in problem.message
    assert "state.json.tmp" in problem.message and "--shutdown-timeout" in problem.message


def test_a_save_killed_at_the_grace_end_is_sigterm_ignored_not_cut_short() -> None:
    late = replace(CUT_SHORT, exit_code=137, sigterm_to_exit_seconds=300.3)
    (problem,) = pod_problems(late, WINDOW)
    assert problem.code is Code.SIGTERM_IGNORED and "its save was still running" in problem.message
    early = replace(CUT_SHORT, exit_code=137, sigterm_to_exit_seconds=30.0)  # a launcher's kill
    assert [p.code for p in pod_problems(early, WINDOW)] == [Code.SAVE_CUT_SHORT]


def test_a_reclaim_that_failed_a_backoff_limit_0_job_names_the_cause() -> None:
    failed = JobSeen("train", 1, 0, failed_reason="BackoffLimitExceeded")
    result = verdict([ReclaimSeen("n", 1.0, (COUNTED,))], failed, WINDOW)
    assert [p.code for p in result.problems] == [
        Code.RECLAIM_COUNTED_AS_FAILURE,
        Code.JOB_FAILED,
    ]
    assert "because the reclaim of sweep-0-aaaa counted against its backoffLimit" in (
        result.problems[1].message
    )
    assert "podFailurePolicy" in result.problems[0].message


@pytest.mark.parametrize(
    ("reclaims", "job", "outcome"),
    [
        ([(GOOD,)], DONE, Outcome.SAFE),  # every condition met
        ([(GOOD, replace(GOOD, pod="sweep-1-aaaa", index="1"))], DONE, Outcome.SAFE),
        ([(GOOD,), (replace(GOOD, pod="sweep-0-bbbb"),)], DONE, Outcome.SAFE),
        # each "safe" condition broken on its own
        ([(GOOD,)], JobSeen("sweep", 2, 1, timed_out=True), Outcome.UNSAFE),  # not completed
        ([(GOOD,)], JobSeen("sweep", 2, 2, failed_reason="X"), Outcome.UNSAFE),  # failed
        ([(GOOD, IGNORES)], DONE, Outcome.UNSAFE),  # one pod of two broke the contract
        ([(replace(GOOD, save=Save.UNSEEN),)], DONE, Outcome.UNVERIFIED),  # no save seen
        ([(GOOD,), (replace(GOOD, save=Save.UNSEEN),)], DONE, Outcome.UNVERIFIED),  # one of two
        ([()], DONE, Outcome.UNVERIFIED),  # no pod stopped
    ],
    ids=[
        "safe",
        "safe-gang",
        "safe-two-reclaims",
        "not-completed",
        "job-failed",
        "one-pod-unsafe",
        "save-unseen",
        "one-save-unseen",
        "no-pod-stopped",
    ],
)
def test_one_row_per_safe_condition(
    reclaims: list[tuple[PodSeen, ...]], job: JobSeen, outcome: Outcome
) -> None:
    result = verdict([ReclaimSeen("n", 1.0, pods) for pods in reclaims], job, WINDOW)
    assert result.outcome is outcome
    assert (
        result.exit_code
        == EXIT_CODES[outcome]
        == {"safe": 0, "unsafe": 1, "unverified": 3}[outcome.value]
    )


def test_unverified_names_what_it_could_not_see_and_how_to_let_it_see() -> None:
    unseen = replace(GOOD, uses_library=False, save=Save.UNSEEN)
    result = verdict([ReclaimSeen("n", 1.0, (unseen,))], DONE, WINDOW)
    (sentence,) = result.unverified
    assert sentence.startswith("the drill could not see sweep-0-aaaa save after SIGTERM")
    assert "together_worker" in sentence and "volume" in sentence
    remote = replace(unseen, volume_readable=False)
    (far,) = verdict([ReclaimSeen("n", 1.0, (remote,))], DONE, WINDOW).unverified
    assert "not readable from where the drill runs" in far
    text = readable(result, [ReclaimSeen("n", 1.0, (unseen,))], DONE, WINDOW)
    assert text.endswith("VERDICT: unverified") and f"unverified: {sentence}" in text


def test_forced_kill_says_whether_the_save_was_still_running() -> None:
    (slow,) = pod_problems(replace(IGNORES, uses_library=True, saving_when_killed=True), WINDOW)
    assert slow.code is Code.SIGTERM_IGNORED and "its save was still running" in slow.message
    (deaf,) = pod_problems(IGNORES, WINDOW)
    assert "it had not exited after SIGTERM" in deaf.message and "after 300.2 s" in deaf.message


def test_removed_with_its_node_before_any_exit_is_a_forced_kill() -> None:
    gone = replace(IGNORES, exit_code=None, sigterm_to_exit_seconds=None, grace_seconds=600)
    assert gone.forced_kill
    assert _codes(gone) == [Code.GRACE_EXCEEDS_WINDOW, Code.SIGTERM_IGNORED]


def test_a_grace_longer_than_the_window() -> None:
    (problem,) = pod_problems(replace(GOOD, grace_seconds=600), WINDOW)
    assert problem.code is Code.GRACE_EXCEEDS_WINDOW
    assert (
        "terminationGracePeriodSeconds=600, longer than the 300 s drain window" in problem.message
    )
    assert pod_problems(replace(GOOD, grace_seconds=300), WINDOW) == []


def test_a_next_pod_that_starts_over_is_not_resumed() -> None:
    fresh = replace(GOOD, next_resumed_from=None)
    assert fresh.resumed is False and fresh.work_redone == 42
    (problem,) = pod_problems(fresh, WINDOW)
    assert problem.code is Code.NOT_RESUMED
    assert "sweep-0-bbbb ran index 0 again from step 0" in problem.message
    assert "complete checkpoint at step 42" in problem.message
    older = replace(GOOD, next_resumed_from=30)  # an older checkpoint than the latest one
    assert older.resumed is False


def test_work_redone_is_the_steps_after_the_checkpoint_it_resumed_from() -> None:
    periodic = replace(GOOD, checkpointed_step=40, reached_step=47, next_resumed_from=40)
    assert periodic.resumed is True and periodic.work_redone == 7
    assert replace(GOOD, next_pod=None).work_redone is None  # no next pod yet
    assert replace(GOOD, uses_library=False).resumed is None  # not known without the library


def test_a_failed_or_unfinished_job() -> None:
    failed = JobSeen("sweep", 2, 1, failed_reason="BackoffLimitExceeded")
    assert _codes(GOOD, job=failed) == [Code.JOB_FAILED]
    result = verdict([ReclaimSeen("n", 1.0, (GOOD,))], failed, WINDOW)
    assert not result.safe and not result.completed
    assert "failed (BackoffLimitExceeded)" in result.problems[0].message
    late = JobSeen("sweep", 2, 1, timed_out=True)
    (problem,) = verdict([ReclaimSeen("n", 1.0, (GOOD,))], late, WINDOW).problems
    assert "did not complete in the drill's time (1 of 2 done)" in problem.message


def test_a_drill_that_stopped_no_pod_proves_nothing() -> None:
    result = verdict([ReclaimSeen("n", 500.0, ())], DONE, WINDOW)
    assert not result.safe and result.problems == ()
    assert result.outcome is Outcome.UNVERIFIED
    assert "no reclaim stopped a running pod" in result.notes[0]


def test_the_json_report_has_the_fields_ci_reads() -> None:
    reclaims = [ReclaimSeen("gpu-preemptible-1", 12.0, (GOOD, IGNORES), 31.0)]
    result = verdict(reclaims, DONE, WINDOW)
    report = json.loads(json.dumps(as_json(result, reclaims, DONE, {"image": "x"}, WINDOW)))
    assert report["verdict"] == "unsafe" and report["completed"] is True
    (problem,) = pod_problems(IGNORES, WINDOW)
    assert report["problems"] == [
        {
            "code": "SIGTERM_IGNORED",
            "pod": "sweep-0-aaaa",
            "sentence": problem.sentence,
            "fix": FIXES[Code.SIGTERM_IGNORED],
            "message": f"{problem.sentence} (fix: {FIXES[Code.SIGTERM_IGNORED]})",
        }
    ]
    assert problem.sentence.startswith("sweep-0-aaaa was killed by force") and (
        "fix" not in problem.sentence
    )
    (reclaim,) = report["reclaims"]
    assert reclaim["node"] == "gpu-preemptible-1" and reclaim["refill_seconds"] == 31.0
    first, second = reclaim["pods"]
    assert {
        k: first[k] for k in ("pod", "exit_code", "sigterm_to_exit_seconds", "forced_kill")
    } == {
        "pod": "sweep-0-aaaa",
        "exit_code": 143,
        "sigterm_to_exit_seconds": 0.4,
        "forced_kill": False,
    }
    assert first["resumed"] is True and first["work_redone"] == 0
    assert second["forced_kill"] is True and second["resumed"] is None


def test_the_readable_report_ends_with_the_verdict_and_names_sources() -> None:
    reclaims = [ReclaimSeen("gpu-preemptible-1", 12.0, (GOOD,), 31.0)]
    text = readable(verdict(reclaims, DONE, WINDOW), reclaims, DONE, WINDOW)
    assert text.splitlines()[-1] == "VERDICT: safe"
    assert "exit after 0.4 s of a 300 s grace (drain window 300 s)" in text
    assert "work redone: 0 step(s) (checkpoint every 10; from status.json)" in text
    assert "a new preemptible node Ready after 31.0 s" in text
    unsafe = readable(verdict([ReclaimSeen("n", 1, (IGNORES,))], DONE, WINDOW), [], DONE, WINDOW)
    assert "SIGTERM_IGNORED: sweep-0-aaaa was killed by force" in unsafe
    assert unsafe.endswith("VERDICT: unsafe")


def test_a_gangs_report_shows_each_index_and_where_it_resumed() -> None:
    one = replace(GOOD, pod="sweep-1-cccc", index="1", checkpointed_step=7, next_pod="sweep-1-dd")
    one = replace(one, next_resumed_from=7)
    reclaims = [ReclaimSeen("n", 5.0, (GOOD, one), 20.0)]
    result = verdict(reclaims, DONE, WINDOW)
    text = readable(result, reclaims, DONE, WINDOW)
    assert "pod sweep-0-aaaa (index 0):" in text and "pod sweep-1-cccc (index 1):" in text
    assert "index 0: sweep-0-aaaa saved step 42, sweep-0-bbbb resumed from 42" in text
    assert "index 1: sweep-1-cccc saved step 7, sweep-1-dd resumed from 7" in text
    report = as_json(result, reclaims, DONE, {}, WINDOW)
    assert report["indexes"]["1"] == [
        {
            "pod": "sweep-1-cccc",
            "checkpointed_step": 7,
            "next_pod": "sweep-1-dd",
            "next_resumed_from": 7,
        }
    ]
    assert report["verdict"] == "safe" and report["exit_code"] == 0
    assert report["reclaims"][0]["pods"][1]["save_after_sigterm"] == "completed"


# --- every word of each problem: the sentence a user reads, its parts chosen from what was seen


POD = replace(GOOD, uses_library=False, checkpointed_step=None, next_pod=None)
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


@pytest.mark.parametrize(
    ("seconds", "took"),
    [(2.7, "ended 2.7 s after SIGTERM, before"), (None, "ended before")],
)
def test_a_save_cut_short_names_when_and_what_killed_it(seconds: float | None, took: str) -> None:
    pod = replace(CUT_SHORT, sigterm_to_exit_seconds=seconds)
    assert _message(pod, Code.SAVE_CUT_SHORT) == (
        f"sweep-0-aaaa {took} its 300 s grace period with exit code 1, while the save it began "
        "after SIGTERM was unfinished (seen in the volume: 0/state.json.tmp left unfinished): "
        "something killed the trainer early, most likely its launcher or process supervisor"
    )


def test_a_reclaim_counted_as_a_failure_says_what_it_costs() -> None:
    assert _message(COUNTED, Code.RECLAIM_COUNTED_AS_FAILURE) == (
        "sweep-0-aaaa's reclaim raised the Job's failed count, so every reclaim uses up "
        "backoffLimit and enough of them fail the Job although nothing crashed"
    )


HOW_TO_SEE = (
    "; to let it see, use together_worker's Worker (its status.json), or write checkpoints to "
    "the Job's claimed volume (on a cluster the drill reads it through its reader pod, or "
    "--volume-dir)"
)


@pytest.mark.parametrize(
    ("pod", "where"),
    [
        (
            replace(GOOD, save=Save.UNSEEN),
            "its together_worker status file records no save begun after SIGTERM",
        ),
        (
            replace(POD, save=Save.UNSEEN, volume_readable=False),
            "the Job's checkpoint volume is not readable from where the drill runs, and the pod "
            "left no together_worker status file the drill could read",
        ),
        (
            replace(POD, save=Save.UNSEEN),
            "it left no together_worker status file, and the drill found no checkpoint file "
            "written after the reclaim on the volume",
        ),
    ],
    ids=["library", "volume-unreadable", "nothing-on-the-volume"],
)
def test_an_unseen_save_says_where_the_drill_looked(pod: PodSeen, where: str) -> None:
    assert unseen_save(pod) == (
        f"the drill could not see sweep-0-aaaa save after SIGTERM: {where}{HOW_TO_SEE}"
    )


def test_only_a_failed_job_blames_the_reclaims_counted_against_it() -> None:
    fix = f" (fix: {FIXES[Code.JOB_FAILED]})"
    failed = JobSeen("train", 1, 0, failed_reason="BackoffLimitExceeded")
    (problem,) = job_problems(failed, ["train-0-aaaa", "train-0-bbbb"])
    assert problem.message == (
        "the Job train failed (BackoffLimitExceeded) because the reclaim of train-0-aaaa, "
        f"train-0-bbbb counted against its backoffLimit (RECLAIM_COUNTED_AS_FAILURE){fix}"
    )
    late = JobSeen("train", 2, 1, timed_out=True)
    (problem,) = job_problems(late, ["train-0-aaaa"])
    assert problem.message == (
        f"the Job train did not complete in the drill's time (1 of 2 done){fix}"
    )


def test_no_none_in_the_report_of_a_pod_of_a_job_that_is_not_indexed() -> None:
    """A non-Indexed Job's pods have no index: none is shown, the JSON has no index key for
    them, and a value not seen reads "unknown", never Python's None."""
    plain = replace(GOOD, index=None, exit_code=None, checkpointed_step=None, checkpoint_every=None)
    other = replace(plain, pod="sweep-x", next_resumed_from=None)
    reclaims = [ReclaimSeen("n", 5.0, (plain, other), 20.0)]
    result = verdict(reclaims, DONE, WINDOW)
    text = readable(result, reclaims, DONE, WINDOW)
    assert "None" not in text
    assert f"pod {GOOD.pod}:" in text and "exit code unknown;" in text
    assert "(step unknown)" in text and "(checkpoint every unknown; from status.json)" in text
    assert as_json(result, reclaims, DONE, {}, WINDOW)["indexes"] == {}
    gang = [ReclaimSeen("n", 5.0, (replace(other, index="0"), replace(GOOD, index="1")), 2.0)]
    shown = readable(verdict(gang, DONE, WINDOW), gang, DONE, WINDOW)
    assert "index 0: sweep-x saved step unknown, sweep-0-bbbb resumed from no step seen" in shown
