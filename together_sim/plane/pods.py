"""How pods live and end on the simulator's clock (KWOK only starts and removes them), so a Job
finishes and a drained pod is cut as on a real node."""

from __future__ import annotations

import enum
import logging
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any, Final

from together_facts.values import DRAIN_WINDOW_SECONDS
from together_sim.plane.client import KubeApi, KubeApiError, rfc3339

__all__ = [
    "DEFAULT_RUN_SECONDS",
    "MAX_GRACE_SECONDS",
    "RUN_SECONDS",
    "SIGTERM_SECONDS",
    "Act",
    "PodClock",
    "PodStep",
    "gone",
    "grace_seconds",
    "next_step",
    "removed_exit_code",
    "stop_step",
]

RUN_SECONDS: Final = "together-sim/run-seconds"
SIGTERM_SECONDS: Final = "together-sim/sigterm-seconds"
STARTED_AT: Final = "together-sim/started-at"
EXIT_AT: Final = "together-sim/exit-at"
EXIT_CODE: Final = "together-sim/exit-code"
STOPPING: Final = "together-sim/stopping"
DEFAULT_RUN_SECONDS: Final = 60.0
"""A Job's pod without ``together-sim/run-seconds`` runs one simulated minute."""
MAX_GRACE_SECONDS: Final = DRAIN_WINDOW_SECONDS
"""Together's drain window: no pod gets a longer grace period on a reclaim."""
DEFAULT_GRACE_SECONDS: Final = 30  # Kubernetes' default terminationGracePeriodSeconds
EXIT_SIGTERM: Final = 143
EXIT_SIGKILL: Final = 137

log = logging.getLogger(__name__)
Obj = dict[str, Any]


def _annotations(pod: Obj) -> dict[str, str]:
    result: dict[str, str] = pod["metadata"].get("annotations") or {}
    return result


def _seconds(pod: Obj, key: str, default: float | None) -> float | None:
    raw = _annotations(pod).get(key)
    if raw is None:
        return default
    try:
        return max(0.0, float(raw))
    except ValueError:
        log.warning("%s: annotation %s=%r is not a number of seconds; using %s",
                    KubeApi.pod_name(pod), key, raw, default)  # fmt: skip
        return default


def terminal(pod: Obj) -> bool:
    return pod.get("status", {}).get("phase") in ("Succeeded", "Failed")


def gone(pod: Obj) -> bool:
    """Ended, and held by no finalizer: nothing is left to do to it."""
    return terminal(pod) and not pod["metadata"].get("finalizers")


def _owned_by_job(pod: Obj) -> bool:
    return any(o.get("kind") == "Job" for o in pod["metadata"].get("ownerReferences") or [])


def run_seconds(pod: Obj) -> float | None:
    """How long the pod's work takes, or None for a pod that runs until stopped."""
    if pod["spec"].get("restartPolicy", "Always") == "Always":
        return None
    return _seconds(pod, RUN_SECONDS, DEFAULT_RUN_SECONDS if _owned_by_job(pod) else None)


def _terminated_status(pod: Obj, code: int, reason: str, message: str) -> Obj:
    now = rfc3339()
    started = pod.get("status", {}).get("startTime", now)
    return {
        "status": {
            "phase": "Succeeded" if code == 0 else "Failed",
            "message": message,
            "containerStatuses": [
                {
                    "name": c["name"],
                    "image": c.get("image", ""),
                    "imageID": "",
                    "ready": False,
                    "started": False,
                    "restartCount": 0,
                    "state": {
                        "terminated": {
                            "exitCode": code,
                            "reason": reason,
                            "startedAt": started,
                            "finishedAt": now,
                        }
                    },
                }
                for c in pod["spec"]["containers"]
            ],
            "conditions": [
                {"type": "Ready", "status": "False", "reason": "PodCompleted"},
                {"type": "ContainersReady", "status": "False", "reason": "PodCompleted"},
            ],
        }
    }


class Act(enum.Enum):
    """What one pass does to one pod."""

    WAIT = "wait"
    START = "start"  # note the simulated time its work started
    SUCCEED = "succeed"  # its work is done: Succeeded, exit code 0
    STOP = "stop"  # its node drains: hold it, note its exit, evict it
    EXIT = "exit"  # its process exits after SIGTERM (or SIGKILL): Failed
    RELEASE = "release"  # drop our finalizer so the eviction can finish
    EVICT = "evict"  # on a real node: evict it, and its kubelet sends the SIGTERM


@dataclass(frozen=True)
class PodStep:
    act: Act
    code: int = 0
    """EXIT and STOP: the exit code."""
    exit_at: float = 0.0
    """STOP: the simulated time its process exits."""
    grace: int = 0
    """STOP: the grace period its eviction gives (its own, capped at the drain window)."""


WAIT: Final = PodStep(Act.WAIT)


def stop_step(pod: Obj, drained_at: float) -> PodStep:
    """How a pod on a node drained at ``drained_at`` ends: it exits when its process does after
    SIGTERM (143), or is killed when its grace period runs out first (137)."""
    grace = grace_seconds(pod)
    shutdown = _seconds(pod, SIGTERM_SECONDS, 0.0) or 0.0
    code = EXIT_SIGTERM if shutdown <= grace else EXIT_SIGKILL
    return PodStep(Act.STOP, code=code, exit_at=drained_at + min(shutdown, grace), grace=grace)


def grace_seconds(pod: Obj) -> int:
    """The grace period a drain gives the pod: its own, capped at Together's drain window."""
    own = pod["spec"].get("terminationGracePeriodSeconds", DEFAULT_GRACE_SECONDS)
    return min(int(own), MAX_GRACE_SECONDS)


def next_step(
    now: float, pod: Obj, drains: dict[str, float], real: Collection[str] = ()
) -> PodStep:
    """What a pass at simulated ``now`` does to ``pod``; ``drains`` maps a draining node to its
    simulated T+0, ``real`` names the real nodes, whose processes decide for themselves (the
    clock's only act there is the drain's eviction). Pure: the pod's own annotations carry
    everything decided before."""
    meta, node = pod["metadata"], pod["spec"].get("nodeName")
    if node in real:
        evictable = not terminal(pod) and not meta.get("deletionTimestamp")
        if node in drains and evictable:
            return PodStep(Act.EVICT, grace=grace_seconds(pod))
        return WAIT
    annotations = _annotations(pod)
    if STOPPING in (meta.get("finalizers") or []):
        if now < float(annotations.get(EXIT_AT, "0")):
            return WAIT
        if not terminal(pod):
            return PodStep(Act.EXIT, code=int(annotations.get(EXIT_CODE, str(EXIT_SIGTERM))))
        return PodStep(Act.RELEASE)  # on the pass after the exit, with the new resourceVersion
    if terminal(pod) or meta.get("deletionTimestamp") or not node:
        return WAIT
    drained_at = drains.get(node)
    work = run_seconds(pod)
    if pod.get("status", {}).get("phase") == "Running" and work is not None:
        started = annotations.get(STARTED_AT)
        if started is None and drained_at is None:
            return PodStep(Act.START)
        done_at = float(started) + work if started is not None else None
        # Work that ended before the drain's T+0 succeeded, however late we notice it.
        before_drain = done_at is not None and (drained_at is None or done_at <= drained_at)
        if done_at is not None and now >= done_at and before_drain:
            return PodStep(Act.SUCCEED)
    return stop_step(pod, drained_at) if drained_at is not None else WAIT


def removed_exit_code(pod: Obj) -> int:
    """The exit code of a pod still on a node when the node goes: the one its drain already
    decided (a clock advanced past the whole drain window in one step), else SIGKILL."""
    return int(_annotations(pod).get(EXIT_CODE, str(EXIT_SIGKILL)))


class PodClock:
    """Ends pods on one cluster's API server at simulated times (what a pass does to a pod is
    decided by :func:`next_step`, pure; this applies it):

    * A pod with ``restartPolicy`` Never or OnFailure (a Job's pod, typically) runs for the
      simulated seconds in its annotation ``together-sim/run-seconds`` (default
      :data:`DEFAULT_RUN_SECONDS` for a Job's pod; other pods without the annotation run until
      stopped), then ends ``Succeeded`` with exit code 0. The simulated time it started is kept in
      ``together-sim/started-at``.
    * A pod on a node that Together drains (reclaim or scale-down) is stopped: the simulator holds
      it with the finalizer ``together-sim/stopping``, notes when it will exit, and evicts it
      through the eviction API with its own grace period capped at :data:`MAX_GRACE_SECONDS` (the
      eviction gives it the ``DisruptionTarget`` condition). Its process takes
      ``together-sim/sigterm-seconds`` (default 0) to exit after SIGTERM: it ends ``Failed`` with
      exit code 143 (128 + SIGTERM), or 137 (SIGKILL) when that is longer than its grace period.
      Never ``Succeeded``: its work was cut.
    * A pod still on a node when the node is removed goes with it: ``Failed`` (137) with a
      ``DisruptionTarget`` condition, then force-deleted.
    """

    def __init__(self, api: KubeApi) -> None:
        self.api = api

    def _patch_status(self, pod: Obj, patch: Obj) -> None:
        self.api.patch_pod(pod, patch, status=True)

    def _release(self, pod: Obj) -> None:
        """Drop our finalizer (optimistically locked: other controllers edit the list too)."""
        meta = pod["metadata"]
        finalizers = [f for f in meta.get("finalizers") or [] if f != STOPPING]
        patch = {"metadata": {"finalizers": finalizers, "resourceVersion": meta["resourceVersion"]}}
        self.api.patch_pod(pod, patch)

    def step(
        self, now: float, pods: list[Obj], drains: dict[str, float], real: Collection[str] = ()
    ) -> None:
        """One pass over every pod; ``drains`` maps a draining node to its simulated T+0,
        ``real`` names the real nodes (their pods live and end by their processes)."""
        for pod in pods:
            try:
                self._apply(now, pod, next_step(now, pod, drains, real))
            except KubeApiError as exc:
                if exc.status not in (404, 409):  # gone or changed meanwhile: next pass
                    log.warning("%s", exc)

    def _apply(self, now: float, pod: Obj, step: PodStep) -> None:
        if step.act is Act.START:
            self.api.patch_pod(pod, {"metadata": {"annotations": {STARTED_AT: repr(now)}}})
        elif step.act is Act.SUCCEED:
            self._patch_status(pod, _terminated_status(pod, 0, "Completed", ""))
        elif step.act is Act.EXIT:
            signal = "SIGTERM" if step.code == EXIT_SIGTERM else "SIGKILL after its grace period"
            message = f"stopped by a Together drain: exit code {step.code} ({signal})"
            self._patch_status(pod, _terminated_status(pod, step.code, "Error", message))
        elif step.act is Act.RELEASE:
            self._release(pod)
        elif step.act is Act.STOP:
            self._stop(pod, step)
        elif step.act is Act.EVICT and not self.api.evict(pod, step.grace):
            self.api.delete_pod(pod, step.grace)  # a PodDisruptionBudget refused: as _stop

    def _stop(self, pod: Obj, step: PodStep) -> None:
        meta = pod["metadata"]
        patch = {
            "metadata": {
                "resourceVersion": meta["resourceVersion"],
                "finalizers": [*(meta.get("finalizers") or []), STOPPING],
                "annotations": {EXIT_AT: repr(step.exit_at), EXIT_CODE: str(step.code)},
            }
        }
        self.api.patch_pod(pod, patch)
        if not self.api.evict(pod, step.grace):
            log.warning("%s: a PodDisruptionBudget refused the eviction; deleting it "
                        "(Together's drain does not wait)", KubeApi.pod_name(pod))  # fmt: skip
            self.api.delete_pod(pod, step.grace)

    def remove_with_node(self, pods: list[Obj]) -> None:
        """The node is going: what is still on it ends Failed (SIGKILL) and is force-deleted."""
        for pod in pods:
            try:
                if not terminal(pod):
                    message = "the node was removed by Together"
                    patch = _terminated_status(pod, removed_exit_code(pod), "Error", message)
                    patch["status"]["conditions"].append({
                        "type": "DisruptionTarget", "status": "True",
                        "reason": "DeletionByTogether",
                        "message": "the node was removed at the end of Together's drain window",
                        "lastTransitionTime": rfc3339(),
                    })  # fmt: skip
                    self._patch_status(pod, patch)
                if STOPPING in (pod["metadata"].get("finalizers") or []):
                    finalizers = [f for f in pod["metadata"]["finalizers"] if f != STOPPING]
                    self.api.patch_pod(pod, {"metadata": {"finalizers": finalizers}})
                self.api.delete_pod(pod, 0)
            except KubeApiError as exc:
                if exc.status not in (404, 409):
                    log.warning("%s", exc)
