"""What the drill can see of a reclaimed pod's save, as pure functions of what it read: the shared
volume's files at the reclaim and when the pod ended, and together_worker's status files.

A save is only evidence when it began after SIGTERM: a periodic checkpoint from before the
reclaim says nothing about whether the workload keeps the contract."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, NamedTuple

from together_drill.verdict import Save
from together_worker.checkpoints import PARTIAL_PREFIX
from together_worker.status import STATUS_FILE

TEMPORARY_SUFFIXES: Final = (".tmp", ".partial", ".part", "~")
SIGNAL_MATCH_SECONDS: Final = 5.0
"""A run whose signal came within this long after a reclaim is taken as the reclaimed pod's."""


class FileSeen(NamedTuple):
    """A file's size, inode and modification time (wall clock): a file rewritten in place keeps
    its inode, one replaced by a rename (the atomic way) gets another."""

    size: int
    inode: int
    mtime: float


Snapshot = dict[str, FileSeen]
"""The volume's files by path relative to it."""


def temporary(name: str) -> bool:
    """A file being written: a temporary name (``x.tmp``, ``.partial-*``, hidden), never one a
    resume loads."""
    base = name.rsplit("/", 1)[-1]
    return base.startswith((".", PARTIAL_PREFIX)) or base.endswith(TEMPORARY_SUFFIXES)


def _status(name: str) -> bool:
    return STATUS_FILE in name.rsplit("/", 1)[-1]


def checkpoints(files: Snapshot) -> Snapshot:
    """The files under final names: what a resume would load."""
    return {name: seen for name, seen in files.items() if not temporary(name)}


def shrunk_in_place(before: Snapshot, after: Snapshot) -> tuple[str, ...]:
    """The files that got smaller under the same inode: rewritten in place and cut short. A file
    replaced by a rename may well be smaller (a shorter number in a status file) and is whole."""
    before, after = checkpoints(before), checkpoints(after)
    return tuple(
        sorted(
            name
            for name, seen in before.items()
            if name in after and after[name].inode == seen.inode and after[name].size < seen.size
        )
    )


def _in_scope(name: str, index: str | None, indexes: set[str]) -> bool:
    """An Indexed Job's pods write $CHECKPOINT_DIR/<index>: another index's files are not this
    pod's save. A volume laid out otherwise is looked at whole."""
    top = name.split("/", 1)[0] if "/" in name else None
    return index is None or index not in indexes or top == index


def save_from_files(
    before: Snapshot, after: Snapshot, since: float, index: str | None = None
) -> tuple[Save, str | None]:
    """The save a pod began after SIGTERM (``since``, the reclaim's wall-clock time), as the
    volume shows it when the pod ended: a temporary file written since and left behind, or a
    file cut short in place, is a save cut short; a file under its final name written since,
    whole, is a save completed; nothing written since is nothing seen."""
    indexes = {name.split("/", 1)[0] for name in after if "/" in name}
    mine = {
        name: seen
        for name, seen in after.items()
        if not _status(name) and _in_scope(name, index, indexes)
    }
    left = sorted(n for n, seen in mine.items() if temporary(n) and seen.mtime >= since)
    shrunk = [n for n in shrunk_in_place(before, mine) if not _status(n)]
    if left or shrunk:
        return Save.CUT_SHORT, f"the volume: {', '.join(left + shrunk)} left unfinished"
    written = sorted(
        name
        for name, seen in checkpoints(mine).items()
        if seen.mtime >= since and before.get(name) != seen
    )
    if written:
        return Save.COMPLETED, f"the volume: {', '.join(written)} written after SIGTERM"
    return Save.UNSEEN, None


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) else None


def save_from_status(run: dict[str, Any]) -> tuple[Save, str | None]:
    """The save after SIGTERM as together_worker's status file records it for one pod's run:
    still ``saving`` when the pod ended is cut short; a save begun after the signal and
    recorded done is completed."""
    signal_at = _number(run.get("signal_at"))
    began = _number(run.get("save_began_at"))
    if signal_at is None:
        return Save.UNSEEN, None
    after_signal = began is None or began >= signal_at  # an older library records no start
    if run.get("exit_reason") == "saving" and after_signal:
        return Save.CUT_SHORT, "status.json: a save begun after SIGTERM never recorded done"
    if run.get("checkpointed_step") is not None and began is not None and began >= signal_at:
        return Save.COMPLETED, "status.json: a save begun after SIGTERM recorded done"
    if began is None and _number(run.get("seconds_left_after_save")) is not None:
        return Save.COMPLETED, "status.json: a save recorded done after SIGTERM"
    return Save.UNSEEN, None


def run_of(runs: list[dict[str, Any]], pod: str, reclaimed_at: float) -> int | None:
    """Which run of an index's status file is ``pod``'s: by its name (POD_NAME, which
    CheckpointingWorker sets), else the run that got its signal just after the reclaim (an
    Indexed Job's pods all have the hostname <job>-<index>)."""
    named = [i for i, r in enumerate(runs) if r.get("pod") == pod]
    if named:
        return named[-1]
    signalled = [
        i
        for i, r in enumerate(runs)
        if (at := _number(r.get("signal_at"))) is not None
        and 0 <= at - reclaimed_at < SIGNAL_MATCH_SECONDS
    ]
    return signalled[0] if signalled else None


def runs_for(
    found: Mapping[str, list[dict[str, Any]]], index: str | None
) -> list[list[dict[str, Any]]]:
    """The status files to look in for a pod of ``index``: its own index's only, when there is
    one (two pods reclaimed at once would otherwise both match by signal time), else all."""
    if index is not None and index in found:
        return [found[index]]
    return list(found.values())


StatusRuns = Mapping[str, list[dict[str, Any]]]
"""together_worker's status files' runs by the directory each file is in (an index's), oldest
first: what `volume.runs_from` reads from a volume."""


class VolumeSeen(NamedTuple):
    """The volume's files at the reclaim and when the pod's container was seen ended."""

    before: Snapshot
    after: Snapshot


@dataclass(frozen=True)
class SaveJudged:
    """The one judgement of a reclaimed pod's save (`judge_save`), with where it was seen, and
    what the pod's together_worker status run says beside it (all None or False without one).
    Each field is the `PodSeen` field of the same name: the verdict reads them as they are."""

    save: Save
    save_source: str | None
    """Where ``save`` was seen: ``status.json: ...`` or ``the volume: <files> ...``."""
    shrunk_files: tuple[str, ...]
    """Checkpoint files under final names that got smaller in place while the pod drained."""
    saving_when_killed: bool
    """The pod was in a save when its container ended: its status run still ``saving`` (a save
    begun before SIGTERM too), or the save after SIGTERM was cut short."""
    volume_readable: bool
    uses_library: bool = False
    checkpointed_step: int | None = None
    reached_step: int | None = None
    checkpoint_every: int | None = None
    next_pod: str | None = None
    next_resumed_from: int | None = None


def _int(value: object) -> int | None:
    return int(value) if isinstance(value, int | float) else None


def _pod_run(
    runs: StatusRuns, pod: str, index: str | None, since: float
) -> tuple[dict[str, Any], dict[str, Any] | None] | None:
    """The pod's run in the status files it may have written, and the run after it (the next
    pod of its index), None when no status file records it."""
    for found in runs_for(runs, index):
        mine = run_of(found, pod, since)
        if mine is not None:
            return found[mine], found[mine + 1] if mine + 1 < len(found) else None
    return None


def judge_save(
    pod: str, index: str | None, since: float, volume: VolumeSeen | None, runs: StatusRuns
) -> SaveJudged:
    """What the drill concludes of the save ``pod`` (of Indexed Job ``index``) began after
    SIGTERM (``since``: the reclaim's wall-clock time), from both sources it read: the volume's
    files (None: not readable from where the drill runs) and together_worker's status runs.

    The status file, when it records the pod's run, is the judge: it says when the save began,
    which a file's time cannot (a periodic save that straddles SIGTERM writes files after it).
    Without it, the volume is. Files cut short in place are reported whatever the judge says."""
    readable = volume is not None
    save, source = (
        save_from_files(volume.before, volume.after, since, index)
        if volume is not None
        else (Save.UNSEEN, None)
    )
    shrunk = shrunk_in_place(volume.before, volume.after) if volume is not None else ()
    found = _pod_run(runs, pod, index, since)
    if found is None:
        return SaveJudged(save, source, shrunk, save is Save.CUT_SHORT, readable)
    run, following = found
    save, source = save_from_status(run)
    return SaveJudged(
        save,
        source,
        shrunk,
        run.get("exit_reason") == "saving" or save is Save.CUT_SHORT,
        readable,
        uses_library=True,
        checkpointed_step=_int(run.get("checkpointed_step")),
        reached_step=_int(run.get("step")),
        checkpoint_every=_int(run.get("checkpoint_every")),
        next_pod=str(following["pod"]) if following else None,
        next_resumed_from=_int(following.get("resumed_from")) if following else None,
    )
