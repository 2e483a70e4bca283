"""The drill's report: a readable one for a person and a JSON one for CI (`--json FILE`), both
from the same verdict and observations, so they never disagree."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from together_drill.verdict import COULD_NOT_DRILL, JobSeen, PodSeen, ReclaimSeen, Verdict


def _pod_json(pod: PodSeen) -> dict[str, Any]:
    return {
        "pod": pod.pod,
        "index": pod.index,
        "sigterm_delivered": pod.sigterm_delivered,
        "exit_code": pod.exit_code,
        "sigterm_to_exit_seconds": pod.sigterm_to_exit_seconds,
        "grace_seconds": pod.grace_seconds,
        "forced_kill": pod.forced_kill,
        "counted_success": pod.counted_success,
        "uses_library": pod.uses_library,
        "checkpoint_written": pod.checkpoint_written,
        "checkpointed_step": pod.checkpointed_step,
        "next_pod": pod.next_pod,
        "resumed": pod.resumed,
        "work_redone": pod.work_redone,
        "checkpoint_every": pod.checkpoint_every,
        "partial_files": list(pod.shrunk_files),
        "save_after_sigterm": pod.save.value,
        "save_seen_in": pod.save_source,
        "counted_as_failure": pod.counted_as_failure,
    }


def by_index(reclaims: Sequence[ReclaimSeen]) -> dict[str, list[PodSeen]]:
    """Each index's reclaimed pods in order: a gang's report per index (an Indexed Job's only: a
    pod of another Job has no index)."""
    found: dict[str, list[PodSeen]] = {}
    for reclaim in reclaims:
        for pod in reclaim.pods:
            if pod.index is not None:
                found.setdefault(pod.index, []).append(pod)
    return dict(sorted(found.items()))


def not_drilled_json(reason: str) -> dict[str, Any]:
    """The JSON report of a drill that could not run the workload (exit 2)."""
    return {"verdict": "not_drilled", "exit_code": COULD_NOT_DRILL, "reason": reason}


def write_not_drilled(path: Path, reason: str) -> None:
    """Write :func:`not_drilled_json` to ``path`` (``--json``): CI reads a report for every
    outcome, a drill that could not run included, and a PR comment shows its reason. A path that
    cannot be written is said on stderr, never a traceback over the reason already printed."""
    try:
        path.write_text(json.dumps(not_drilled_json(reason), indent=2) + "\n")
    except OSError as failed:
        print(f"together_drill: --json {path}: {failed.strerror}", file=sys.stderr)


def as_json(
    verdict: Verdict,
    reclaims: Sequence[ReclaimSeen],
    job: JobSeen,
    workload: dict[str, Any],
    window_seconds: float,
    warnings: Sequence[str] = (),
) -> dict[str, Any]:
    """The JSON report: ``verdict``, ``completed``, ``problems`` [{code, pod, sentence, fix,
    message}] (``message`` is the sentence and its fix in one line),
    ``reclaims`` [{node, pods: [{pod, exit_code, sigterm_to_exit_seconds, forced_kill, ...}]}]."""
    return {
        "verdict": verdict.outcome.value,
        "exit_code": verdict.exit_code,
        "completed": verdict.completed,
        "unverified": list(verdict.unverified),
        "warnings": list(warnings),
        "problems": [
            {
                "code": p.code.value,
                "pod": p.pod,
                "sentence": p.sentence,
                "fix": p.fix,
                "message": p.message,
            }
            for p in verdict.problems
        ],
        "reclaims": [
            {
                "node": r.node,
                "at_seconds": r.at_seconds,
                "refill_seconds": r.refill_seconds,
                "pods": [_pod_json(pod) for pod in r.pods],
            }
            for r in reclaims
        ],
        "job": {
            "name": job.name,
            "completions": job.completions,
            "succeeded": job.succeeded,
            "failed_reason": job.failed_reason,
            "timed_out": job.timed_out,
        },
        "indexes": {
            index: [
                {
                    "pod": pod.pod,
                    "checkpointed_step": pod.checkpointed_step,
                    "next_pod": pod.next_pod,
                    "next_resumed_from": pod.next_resumed_from,
                }
                for pod in pods
            ]
            for index, pods in by_index(reclaims).items()
        },
        "drain_window_seconds": window_seconds,
        "workload": workload,
        "notes": list(verdict.notes),
    }


def _known(value: object, unknown: str = "unknown") -> str:
    """A value for a sentence: never Python's None."""
    return unknown if value is None else str(value)


def _yes(value: bool | None) -> str:
    return "unknown" if value is None else ("yes" if value else "no")


def readable(
    verdict: Verdict, reclaims: Sequence[ReclaimSeen], job: JobSeen, window_seconds: float
) -> str:
    """The report a person reads at the end of a run; every figure says where it comes from."""
    lines = [f"Drill of Job {job.name}: {len(reclaims)} reclaim(s)"]
    for number, reclaim in enumerate(reclaims, 1):
        refill = (
            f"{reclaim.refill_seconds:.1f} s" if reclaim.refill_seconds is not None else "not seen"
        )
        lines.append(
            f"  reclaim {number}: node {reclaim.node} at +{reclaim.at_seconds:.1f} s "
            f"(refill: a new preemptible node Ready after {refill})"
        )
        if not reclaim.pods:
            lines.append("    no running pod of the Job was on it")
        for pod in reclaim.pods:
            took = (
                f"{pod.sigterm_to_exit_seconds:.1f} s"
                if pod.sigterm_to_exit_seconds is not None
                else "never (removed with the node)"
            )
            lines += [
                f"    pod {pod.pod}"
                + (f" (index {pod.index})" if pod.index is not None else "")
                + ":",
                f"      SIGTERM delivered: {_yes(pod.sigterm_delivered)}; exit after {took} "
                f"of a {pod.grace_seconds:g} s grace (drain window {window_seconds:g} s)",
                f"      exit code {_known(pod.exit_code)}; "
                f"killed by force: {_yes(pod.forced_kill)}; "
                f"counted as success by the Job: {_yes(pod.counted_success)}",
            ]
            lines.append(
                f"      save begun after SIGTERM: {pod.save.value.replace('_', ' ')}"
                + (f" ({pod.save_source})" if pod.save_source else "")
                + ("; the Job counted it as a failure" if pod.counted_as_failure else "")
            )
            if pod.uses_library:
                redone = pod.work_redone
                lines.append(
                    f"      checkpoint written: {_yes(pod.checkpoint_written)} "
                    f"(step {_known(pod.checkpointed_step)}); "
                    f"next pod {pod.next_pod or '(none yet)'} "
                    f"resumed from it: {_yes(pod.resumed)}; work redone: "
                    f"{redone if redone is not None else 'unknown'} step(s) "
                    f"(checkpoint every {_known(pod.checkpoint_every)}; from status.json)"
                )
            else:
                lines.append(
                    "      checkpoint and resume: not known (the workload does not use "
                    "together_worker, whose status file tells)"
                )
    state = (
        f"{job.succeeded} of {job.completions} completed"
        + (f", failed: {job.failed_reason}" if job.failed_reason else "")
        + (", timed out" if job.timed_out else "")
    )
    lines.append(f"  Job: {state}")
    indexes = by_index(reclaims)
    if len(indexes) > 1:
        for index, pods in indexes.items():
            resumed = "; ".join(
                f"{pod.pod} saved step {_known(pod.checkpointed_step)}, "
                f"{pod.next_pod or '(no next pod seen)'} resumed from "
                f"{_known(pod.next_resumed_from, 'no step seen')}"
                if pod.uses_library
                else f"{pod.pod}: resume not known (no status file)"
                for pod in pods
            )
            lines.append(f"  index {index}: {resumed}")
    for problem in verdict.problems:
        lines.append(f"  {problem.code.value}: {problem.message}")
    for sentence in verdict.unverified:
        lines.append(f"  unverified: {sentence}")
    for note in verdict.notes:
        lines.append(f"  note: {note}")
    lines.append(f"VERDICT: {verdict.outcome.value}")
    return "\n".join(lines)
