"""The drill's verdict as a pure function of what it observed: per reclaim, per pod, whether the
workload kept the drain-window contract, and the problem codes (with the fix) where it did not."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Final

FORCED_KILL_EXIT: Final = 137
"""What a container killed with SIGKILL at the end of its grace period reports (128 + 9)."""
GRACE_SLACK: Final = 1.0
"""Seconds before the grace end that still count as at its end (the watch sees a pod late)."""


class Code(StrEnum):
    SIGTERM_IGNORED = "SIGTERM_IGNORED"
    EXIT_ZERO_ON_RECLAIM = "EXIT_ZERO_ON_RECLAIM"
    GRACE_EXCEEDS_WINDOW = "GRACE_EXCEEDS_WINDOW"
    NOT_RESUMED = "NOT_RESUMED"
    PARTIAL_CHECKPOINT = "PARTIAL_CHECKPOINT"
    JOB_FAILED = "JOB_FAILED"
    SAVE_CUT_SHORT = "SAVE_CUT_SHORT"
    RECLAIM_COUNTED_AS_FAILURE = "RECLAIM_COUNTED_AS_FAILURE"


class Outcome(StrEnum):
    """The drill's answer and its exit code (docs/drill.md): ``unverified`` when no problem was
    seen but the drill could not see a save complete after SIGTERM either."""

    SAFE = "safe"
    UNSAFE = "unsafe"
    UNVERIFIED = "unverified"


EXIT_CODES: Final[dict[Outcome, int]] = {Outcome.SAFE: 0, Outcome.UNSAFE: 1, Outcome.UNVERIFIED: 3}
COULD_NOT_DRILL: Final = 2
"""Bad input, a world that did not come up, a Job that ended before a reclaim was due: no
verdict on the workload."""


class Save(StrEnum):
    """What the drill saw of the save a reclaimed pod began after SIGTERM."""

    COMPLETED = "completed"
    """A save begun after SIGTERM ended complete (status file: saved and recorded; volume: a
    file written after the reclaim under its final name, no temporary file of it left)."""
    CUT_SHORT = "cut_short"
    """A save begun after SIGTERM was unfinished when the container ended (status file: still
    ``saving``; volume: a temporary or partial file written after the reclaim, left behind)."""
    UNSEEN = "unseen"
    """No save after SIGTERM the drill could see: no status file of the pod, and no file the
    pod wrote after the reclaim on a volume the drill reads."""


FIXES: Final[dict[Code, str]] = {
    Code.SIGTERM_IGNORED: (
        "handle SIGTERM: checkpoint and exit 143 within the grace period (together_worker's "
        "Worker does both); if a shell is PID 1, run the command under "
        "`python -m together_worker run -- CMD...`"
    ),
    Code.EXIT_ZERO_ON_RECLAIM: (
        "exit non-zero after the checkpoint on SIGTERM, with sys.exit(143) (together_worker's "
        "Worker does; its launcher turns a 0 after a forwarded SIGTERM into 143)"
    ),
    Code.GRACE_EXCEEDS_WINDOW: (
        "set terminationGracePeriodSeconds <= 300 (CheckpointingWorker's drain_seconds) and "
        "checkpoint within it"
    ),
    Code.NOT_RESUMED: (
        "on start, load the latest checkpoint of $CHECKPOINT_DIR/$JOB_COMPLETION_INDEX "
        "(together_worker's Worker.latest())"
    ),
    Code.PARTIAL_CHECKPOINT: (
        "write the checkpoint to a temporary name, fsync, then rename it "
        "(together_worker's CheckpointStore.save does), and finish within the grace period"
    ),
    Code.JOB_FAILED: (
        "fix the pods' problems above; give the Job a podFailurePolicy that ignores "
        "DisruptionTarget (CheckpointingWorker's Job has it), so reclaims never count against "
        "backoffLimit"
    ),
    Code.SAVE_CUT_SHORT: (
        "let the save finish within the pod's grace period: a launcher or supervisor killed the "
        "trainer early (torchrun and accelerate SIGKILL their workers 30 s after forwarding "
        "SIGTERM: set `torchrun --shutdown-timeout` or TORCH_ELASTIC_SHUTDOWN_TIMEOUT to the "
        "grace period; a supervisor's stop timeout likewise)"
    ),
    Code.RECLAIM_COUNTED_AS_FAILURE: (
        "give the Job a podFailurePolicy rule {action: Ignore, onPodConditions: [{type: "
        "DisruptionTarget}]} and podReplacementPolicy: Failed (CheckpointingWorker's Job has "
        "both), so a reclaim requeues the index instead of counting against backoffLimit"
    ),
}
"""The fix of each problem, one per code (docs/drill.md and docs/troubleshooting.md say more)."""


@dataclass(frozen=True)
class PodSeen:
    """One pod a reclaim stopped, as the drill saw it (from the API server's pod watch, the
    shared volume, and the status file when the workload uses together_worker).

    ``sigterm_to_exit_seconds`` counts from the moment the reclaim evicted the pod (the kubelet
    signals within ~0.1 s) to the container's termination. ``shrunk_files`` are checkpoint files
    under their final names that got smaller during the pod's drain: written in place and cut
    off. ``resumed_from`` and ``next_resumed_from`` are library facts (None: not known)."""

    pod: str
    node: str
    index: str | None
    grace_seconds: float
    sigterm_delivered: bool
    exit_code: int | None
    sigterm_to_exit_seconds: float | None
    counted_success: bool
    uses_library: bool = False
    checkpointed_step: int | None = None
    """The last complete checkpoint this pod wrote (library)."""
    reached_step: int | None = None
    """How far this pod got (library): the work after ``checkpointed_step`` is lost."""
    saving_when_killed: bool = False
    """The pod was in a save when its container ended (its status run still ``saving``, or the
    save after SIGTERM cut short): `evidence.judge_save` decides it, as it decides ``save``."""
    next_pod: str | None = None
    next_resumed_from: int | None = None
    """The step the next pod of this index resumed from (library); None: none started yet."""
    checkpoint_every: int | None = None
    shrunk_files: tuple[str, ...] = ()
    save: Save = Save.UNSEEN
    """The one judgement of the save after SIGTERM (`evidence.judge_save`, from both sources)."""
    save_source: str | None = None
    """Where the drill saw ``save``: ``status.json`` or the files it names on the volume."""
    volume_readable: bool = True
    """Whether the drill could read the Job's checkpoint volume (not on a remote cluster)."""
    counted_as_failure: bool = False
    """The Job's ``failed`` count rose for this pod: the reclaim counted against backoffLimit."""

    # Each derived fact is a plain function below (mutmut mutates no decorated function): the
    # properties only name them on the pod.
    @property
    def forced_kill(self) -> bool:
        """Killed by SIGKILL at the grace end (or with the node) instead of exiting itself."""
        return forced_kill(self)

    @property
    def killed_at_grace_end(self) -> bool:
        return killed_at_grace_end(self)

    @property
    def checkpoint_written(self) -> bool | None:
        return checkpoint_written(self)

    @property
    def resumed(self) -> bool | None:
        return resumed(self)

    @property
    def work_redone(self) -> int | None:
        return work_redone(self)


def forced_kill(pod: PodSeen) -> bool:
    """Killed by SIGKILL at the grace end (or with the node) instead of exiting itself."""
    return pod.exit_code == FORCED_KILL_EXIT or (pod.exit_code is None and pod.sigterm_delivered)


def killed_at_grace_end(pod: PodSeen) -> bool:
    """A forced kill when the grace period ran out (or with the node), not before it: what the
    kubelet does, as opposed to a launcher's early SIGKILL."""
    took = pod.sigterm_to_exit_seconds
    return forced_kill(pod) and (took is None or took >= pod.grace_seconds - GRACE_SLACK)


def checkpoint_written(pod: PodSeen) -> bool | None:
    """A complete checkpoint exists for what this pod did (library), None: not known."""
    if not pod.uses_library:
        return None
    return pod.checkpointed_step is not None


def resumed(pod: PodSeen) -> bool | None:
    """The next pod of the index started from this pod's last checkpoint (library)."""
    if not pod.uses_library or pod.next_pod is None:
        return None
    return (pod.next_resumed_from or 0) >= (pod.checkpointed_step or 0)


def work_redone(pod: PodSeen) -> int | None:
    """Steps the next pod did again: how far this one got minus where the next resumed."""
    if not pod.uses_library or pod.next_pod is None or pod.reached_step is None:
        return None
    return max(0, pod.reached_step - (pod.next_resumed_from or 0))


@dataclass(frozen=True)
class ReclaimSeen:
    """One reclaim: the node, when (seconds after the first pod started), the pods it stopped,
    and how long Together's refill took to bring a new preemptible node Ready (None: not yet)."""

    node: str
    at_seconds: float
    pods: tuple[PodSeen, ...]
    refill_seconds: float | None = None


@dataclass(frozen=True)
class JobSeen:
    name: str
    completions: int
    succeeded: int
    failed_reason: str | None = None
    """The Job's Failed condition's reason (BackoffLimitExceeded, ...), None if it did not fail."""
    timed_out: bool = False


@dataclass(frozen=True)
class Problem:
    """One thing a pod or the Job did wrong: its sentence, and the fix of its code (`FIXES`),
    kept apart so a PR comment can show them apart; ``message`` joins them for the report."""

    code: Code
    pod: str | None
    sentence: str

    @property
    def fix(self) -> str:
        return FIXES[self.code]

    @property
    def message(self) -> str:
        return message(self)


def message(problem: Problem) -> str:
    """The problem's sentence and its fix, as the report prints it."""
    return f"{problem.sentence} (fix: {FIXES[problem.code]})"


@dataclass(frozen=True)
class Verdict:
    outcome: Outcome
    completed: bool
    problems: tuple[Problem, ...]
    notes: tuple[str, ...] = field(default_factory=tuple)
    unverified: tuple[str, ...] = ()
    """One sentence per pod whose save the drill could not see (why ``unverified``)."""

    @property
    def safe(self) -> bool:
        return is_safe(self.outcome)

    @property
    def exit_code(self) -> int:
        return exit_code(self.outcome)


def is_safe(outcome: Outcome) -> bool:
    return outcome is Outcome.SAFE


def exit_code(outcome: Outcome) -> int:
    """The drill's exit code for ``outcome`` (docs/drill.md)."""
    return EXIT_CODES[outcome]


def _kill_problem(pod: PodSeen) -> tuple[Code, str] | None:
    """How the pod's container was ended, if that broke the contract: killed mid-write in place,
    its save cut short by something other than the kubelet, or killed by force at the grace
    end."""
    if pod.forced_kill and pod.shrunk_files:
        return (
            Code.PARTIAL_CHECKPOINT,
            f"{pod.pod} was killed while writing {', '.join(pod.shrunk_files)} in place, "
            "which is left partial under its final name for the next pod to load",
        )
    if pod.save is Save.CUT_SHORT and not pod.killed_at_grace_end:
        took = (
            f"{pod.sigterm_to_exit_seconds:.1f} s after SIGTERM, "
            if pod.sigterm_to_exit_seconds is not None
            else ""
        )
        return (
            Code.SAVE_CUT_SHORT,
            f"{pod.pod} ended {took}before its {pod.grace_seconds:g} s grace period with "
            f"exit code {pod.exit_code}, while the save it began after SIGTERM was "
            f"unfinished (seen in {pod.save_source}): something killed the trainer early, "
            "most likely its launcher or process supervisor",
        )
    if pod.forced_kill:
        why = (
            "its save was still running"
            if pod.saving_when_killed
            else "it had not exited after SIGTERM"
        )
        took = (
            f" after {pod.sigterm_to_exit_seconds:.1f} s"
            if pod.sigterm_to_exit_seconds is not None
            else ""
        )
        return (
            Code.SIGTERM_IGNORED,
            f"{pod.pod} was killed by force{took} at the end of its "
            f"{pod.grace_seconds:g} s grace period ({why}), so nothing after its last "
            "checkpoint was saved",
        )
    return None


def pod_problems(pod: PodSeen, window_seconds: float) -> list[Problem]:
    """What one reclaimed pod did wrong, each with its one sentence and its fix."""
    found: list[tuple[Code, str]] = []
    if pod.grace_seconds > window_seconds:
        found.append(
            (
                Code.GRACE_EXCEEDS_WINDOW,
                f"{pod.pod} asks for terminationGracePeriodSeconds={pod.grace_seconds:g}, longer "
                f"than the {window_seconds:g} s drain window, so Together removes its node "
                "before the grace period ends",
            )
        )
    killed = _kill_problem(pod)
    if killed is not None:
        found.append(killed)
    if pod.exit_code == 0 or pod.counted_success:
        index = f"index {pod.index}" if pod.index is not None else "its work"
        found.append(
            (
                Code.EXIT_ZERO_ON_RECLAIM,
                f"{pod.pod} exited 0 after SIGTERM, so it ended Succeeded and the Job counted "
                f"{index} as done although the work was cut short",
            )
        )
    if pod.resumed is False:
        found.append(
            (
                Code.NOT_RESUMED,
                f"{pod.next_pod} ran index {pod.index} again from step "
                f"{pod.next_resumed_from or 0} although {pod.pod} left a complete checkpoint at "
                f"step {pod.checkpointed_step}",
            )
        )
    if pod.counted_as_failure:
        found.append(
            (
                Code.RECLAIM_COUNTED_AS_FAILURE,
                f"{pod.pod}'s reclaim raised the Job's failed count, so every reclaim uses up "
                "backoffLimit and enough of them fail the Job although nothing crashed",
            )
        )
    return [Problem(code, pod.pod, text) for code, text in found]


def unseen_save(pod: PodSeen) -> str:
    """The one sentence of a pod whose save the drill could not see, and how to let it see."""
    if pod.uses_library:
        where = "its together_worker status file records no save begun after SIGTERM"
    elif not pod.volume_readable:
        where = (
            "the Job's checkpoint volume is not readable from where the drill runs, and the pod "
            "left no together_worker status file the drill could read"
        )
    else:
        where = (
            "it left no together_worker status file, and the drill found no checkpoint file "
            "written after the reclaim on the volume"
        )
    return (
        f"the drill could not see {pod.pod} save after SIGTERM: {where}; to let it see, use "
        "together_worker's Worker (its status.json), or write checkpoints to the Job's claimed "
        "volume (on a cluster the drill reads it through its reader pod, or --volume-dir)"
    )


def job_problems(job: JobSeen, counted: Sequence[str] = ()) -> list[Problem]:
    """The Job's own failure, naming its cause when reclaims were counted as failures."""
    if job.failed_reason is None and not job.timed_out:
        return []
    what = (
        f"failed ({job.failed_reason})"
        if job.failed_reason
        else f"did not complete in the drill's time ({job.succeeded} of {job.completions} done)"
    )
    if job.failed_reason and counted:
        what += (
            f" because the reclaim of {', '.join(counted)} counted against its backoffLimit "
            "(RECLAIM_COUNTED_AS_FAILURE)"
        )
    return [
        Problem(
            Code.JOB_FAILED,
            None,
            f"the Job {job.name} {what}",
        )
    ]


def verdict(reclaims: Iterable[ReclaimSeen], job: JobSeen, window_seconds: float) -> Verdict:
    """``safe`` only when the Job completed, no reclaimed pod broke the contract, and for every
    pod stopped the drill saw a save begun after SIGTERM end complete; ``unsafe`` on any problem;
    otherwise ``unverified`` (each unseen save named, with how to let the drill see it).

    A drill in which no reclaim stopped a running pod proves nothing: it is not safe, and says so.
    """
    reclaims = tuple(reclaims)
    pods = [pod for r in reclaims for pod in r.pods]
    problems = [p for pod in pods for p in pod_problems(pod, window_seconds)]
    problems += job_problems(job, [pod.pod for pod in pods if pod.counted_as_failure])
    completed = job.succeeded >= job.completions and job.failed_reason is None
    notes = []
    if not pods:
        notes.append(
            "no reclaim stopped a running pod, so the drill proved nothing; "
            "use --at with earlier times, or a longer-running workload"
        )
    unseen = tuple(unseen_save(pod) for pod in pods if pod.save is not Save.COMPLETED)
    if problems or not completed:
        outcome = Outcome.UNSAFE
    elif unseen or not pods:
        outcome = Outcome.UNVERIFIED
    else:
        outcome = Outcome.SAFE
    return Verdict(
        outcome=outcome,
        completed=completed,
        problems=tuple(problems),
        notes=tuple(notes),
        unverified=unseen,
    )
