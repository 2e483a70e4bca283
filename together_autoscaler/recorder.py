"""The loop's Event recorder: it de-duplicates what the decisions explain, as Karpenter's recorder
does, so `decide` says every Event it means each scan and stays a pure function."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from together_autoscaler.model import Explanation, PendingPod

__all__ = ["MAX_POD_EVENTS", "Recorder"]

MAX_POD_EVENTS = 20
"""Events one scan records on pods, whatever their reason; a burst of 500 pods is explained
20 at a time, one batch per scan (the log line and the metric carry the totals)."""


class Recorder:
    """Writes a scan's Events through `write`: every Node Event; a pod's only the first time it
    is given that reason while it stays pending (so a hold is not announced every scan), and at
    most `MAX_POD_EVENTS` of them a scan (the rest at the next scans). `failed` hears an Event
    that could not be written: it must not stop scaling."""

    def __init__(
        self, write: Callable[[Explanation], None], failed: Callable[[Exception], None]
    ) -> None:
        self._write = write
        self._failed = failed
        self._told: set[tuple[str, str]] = set()
        """(pod uid, reason) pairs already given an Event."""

    def due(
        self, events: Iterable[Explanation], pending: Iterable[PendingPod]
    ) -> list[Explanation]:
        """The Events to write now of a scan's `events`, `pending` being the pods still pending
        (a pod no longer pending is forgotten: told again if it comes back)."""
        uids = {p.uid for p in pending}
        self._told = {(uid, why) for uid, why in self._told if uid in uids}
        events = list(events)
        fresh: list[Explanation] = []
        for event in (e for e in events if e.kind == "Pod"):
            if len(fresh) >= MAX_POD_EVENTS:
                break
            if (event.uid, event.reason) not in self._told:
                fresh.append(event)
                self._told.add((event.uid, event.reason))
        return [e for e in events if e.kind == "Node"] + fresh

    def record(self, events: Iterable[Explanation], pending: Iterable[PendingPod]) -> None:
        """Write the Events `due` says; one that fails goes to `failed`."""
        for event in self.due(events, pending):
            try:
                self._write(event)
            except Exception as error:  # an Event that cannot be written must not stop scaling
                self._failed(error)
