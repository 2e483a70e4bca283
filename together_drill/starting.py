"""Why a pod of the Job does not run, as pure functions of what the API server shows: a container
waiting for a reason that will not fix itself, the pod's or the Job's events (FailedMount,
FailedScheduling, FailedCreate), or a container that ended non-zero on its own. Each is one
sentence naming the object and the fix; the run ends the drill with it (exit 2)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

Obj = dict[str, Any]

STUCK_SECONDS: Final = 15.0
"""A reason still there after this long is not one that fixes itself: the drill gives up."""

WAITING_FIXES: Final = {
    "ErrImageNeverPull": "the image is not on the node and the pod may not pull it "
    "(imagePullPolicy: Never): import it on the nodes (locally: --image-archive FILE) or let "
    "the pod pull it (imagePullPolicy: IfNotPresent)",
    "ImagePullBackOff": "the node cannot pull the image: check its name and tag, that the "
    "nodes reach its registry, and the pod's imagePullSecrets",
    "ErrImagePull": "the node cannot pull the image: check its name and tag, that the nodes "
    "reach its registry, and the pod's imagePullSecrets",
    "InvalidImageName": "the image's name is not valid: fix it in the Job",
    "CreateContainerConfigError": "the container's configuration names an object or key that "
    "is not there: create it in the Job's namespace, or put it in the manifest (the drill "
    "creates the ConfigMaps, Secrets and ServiceAccounts the manifest holds)",
    "CreateContainerError": "the runtime cannot create the container: fix the command or the image",
}
EVENT_FIXES: Final = {
    "FailedMount": "a volume of the pod cannot be mounted: create what it names in the Job's "
    "namespace, or put it in the manifest (the drill creates the ConfigMaps, Secrets and "
    "ServiceAccounts the manifest holds)",
    "FailedAttachVolume": "a volume of the pod cannot be attached: check the claim and its storage",
    "FailedScheduling": "the scheduler cannot place the pod: give it requests, a nodeSelector "
    "and tolerations that the nodes the drill reclaims satisfy, or free capacity there",
    "FailedCreate": "the Job controller cannot create the pod: create what it names (a "
    "ServiceAccount, a quota's room) in the Job's namespace, or put it in the manifest",
}


def _statuses(pod: Obj) -> list[Obj]:
    status = pod.get("status", {})
    found: list[Obj] = [
        *(status.get("initContainerStatuses") or []),
        *(status.get("containerStatuses") or []),
    ]
    return found


def blocked(pod: Obj) -> tuple[str, str] | None:
    """The waiting reason that keeps ``pod`` from running and the sentence for it; None when it
    has none (it may be starting)."""
    name = pod["metadata"]["name"]
    for status in _statuses(pod):
        waiting = status.get("state", {}).get("waiting") or {}
        reason = waiting.get("reason")
        if reason in WAITING_FIXES:
            message = f": {waiting['message']}" if waiting.get("message") else ""
            return reason, (
                f"pod {name} cannot start: container {status.get('name')} (image "
                f"{status.get('image')}) is waiting with {reason}{message}; "
                f"{WAITING_FIXES[reason]}"
            )
    return None


PASSING: Final = ("no relationship found between node",)
"""Event messages of a race that fixes itself: the API server's node authorizer lets a kubelet
read a pod's claim only once its graph has the pod on that node, which lags under load, and the
kubelet retries the mount (kubernetes/kubernetes#113429; seen on a slow host's first Job pod)."""


def event_blocked(events: Iterable[Obj], what: str) -> tuple[str, str] | None:
    """The latest warning event of ``what`` (pod P, Job J) that says why it cannot run (one of
    a race that fixes itself, :data:`PASSING`, says nothing)."""
    latest: Obj | None = None
    for event in events:
        if (
            event.get("reason") in EVENT_FIXES
            and event.get("type", "Warning") == "Warning"
            and not any(p in str(event.get("message") or "") for p in PASSING)
        ):
            latest = event
    if latest is None:
        return None
    reason = str(latest["reason"])
    message = str(latest.get("message") or "").strip()
    said = f" ({message})" if message else ""
    return reason, f"{what} cannot run: {reason}{said}; {EVENT_FIXES[reason]}"


def failed_by_itself(pod: Obj) -> tuple[str, int] | None:
    """A container of ``pod`` that ended non-zero (or was restarted after it did) with no one
    deleting the pod: its name and exit code. A pod being deleted (a reclaim, the Job
    controller) is not one."""
    if pod["metadata"].get("deletionTimestamp") or pod.get("_event") == "DELETED":
        return None
    for status in _statuses(pod):
        for state in (status.get("state") or {}, status.get("lastState") or {}):
            ended = state.get("terminated")
            if ended and int(ended.get("exitCode", 0)) != 0:
                return str(status.get("name")), int(ended["exitCode"])
    return None


def fails_by_itself(job: str, pod: str, container: str, code: int, at: float, logs: str) -> str:
    """The sentence of a workload that failed on its own, with its last log lines."""
    lines = logs.rstrip().splitlines()[-10:]
    shown = "\n".join(f"    {line}" for line in lines) if lines else "    (no output)"
    return (
        f"pod {pod} of Job {job} failed by itself (container {container} exited {code} at "
        f"+{at:.1f} s, with no reclaim on it): the workload fails on its own, so there is "
        "nothing to drill; run it as it is until it works (its command, its files in the image, "
        f"its arguments), then drill it. Its last log lines:\n{shown}"
    )
