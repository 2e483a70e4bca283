"""The one judge of a reclaimed pod's save (`evidence.judge_save`): both sources the drill read
(the volume's files, together_worker's status runs) in, one `Save` and where it was seen out,
with no cluster and no file system."""

from __future__ import annotations

from typing import Any

from together_drill.evidence import (
    FileSeen,
    SaveJudged,
    Snapshot,
    VolumeSeen,
    judge_save,
    save_from_status,
)
from together_drill.verdict import Save

RECLAIM = 1000.0  # the reclaim's wall-clock time
SIGNAL = 1000.5  # when the pod's worker saw SIGTERM

BEFORE: Snapshot = {"0/step-10.ckpt": FileSeen(100, 1, 900.0)}
WRITTEN = VolumeSeen(BEFORE, {**BEFORE, "0/step-12.ckpt": FileSeen(100, 2, 1003.0)})
"""A checkpoint under its final name written after the reclaim: the volume says completed."""
LEFT = VolumeSeen(BEFORE, {**BEFORE, "0/.partial-000000000012-7": FileSeen(5, 3, 1002.0)})
"""A temporary file written after the reclaim and left: the volume says cut short."""

# A periodic save that began before SIGTERM and ended after it: the file it wrote is newer than
# the reclaim, the status run records it done after the signal, with time left.
STRADDLING: dict[str, Any] = {
    "pod": "sweep-0-aaaa",
    "signal_at": SIGNAL,
    "save_began_at": 999.0,
    "seconds_left_after_save": 297.0,
    "checkpointed_step": 12,
    "step": 13,
    "checkpoint_every": 6,
    "exit_reason": "reclaimed",
}
NEXT: dict[str, Any] = {"pod": "sweep-0-bbbb", "resumed_from": 12}


def test_a_periodic_save_that_straddles_sigterm_is_no_save_after_it() -> None:
    """The status file knows when the save began, which a file's time cannot: the drill must
    say unverified, not safe (a save after SIGTERM is what the reclaim asked for)."""
    assert save_from_status(STRADDLING) == (Save.UNSEEN, None)
    judged = judge_save("sweep-0-aaaa", "0", RECLAIM, WRITTEN, {"0": [STRADDLING]})
    assert (judged.save, judged.save_source) == (Save.UNSEEN, None)
    assert judged.uses_library and not judged.saving_when_killed


def test_the_same_save_begun_after_sigterm_is_completed() -> None:
    after = {**STRADDLING, "save_began_at": SIGNAL + 0.1}
    judged = judge_save("sweep-0-aaaa", "0", RECLAIM, WRITTEN, {"0": [after]})
    assert judged.save is Save.COMPLETED
    assert judged.save_source == "status.json: a save begun after SIGTERM recorded done"


def test_without_a_status_run_the_volume_judges() -> None:
    assert judge_save("sweep-0-aaaa", "0", RECLAIM, WRITTEN, {}) == SaveJudged(
        Save.COMPLETED, "the volume: 0/step-12.ckpt written after SIGTERM", (), False, True
    )
    cut = judge_save("sweep-0-aaaa", "0", RECLAIM, LEFT, {})
    assert cut == SaveJudged(
        Save.CUT_SHORT,
        "the volume: 0/.partial-000000000012-7 left unfinished",
        (),
        True,  # a save cut short was running when the pod ended
        True,
    )


def test_a_status_run_of_another_pod_is_not_this_pods() -> None:
    """Named runs of other pods, signalled long after the reclaim: the volume judges."""
    other = {**STRADDLING, "pod": "sweep-0-zzzz", "signal_at": RECLAIM + 60}
    judged = judge_save("sweep-0-aaaa", "0", RECLAIM, LEFT, {"0": [other]})
    assert judged.save is Save.CUT_SHORT and not judged.uses_library


def test_the_status_run_wins_over_the_volume_either_way() -> None:
    """A save the status file records cut short is cut short though the volume shows a whole
    file; one it records done is completed though a temporary file was left."""
    saving = {**STRADDLING, "save_began_at": SIGNAL + 0.1, "exit_reason": "saving"}
    judged = judge_save("sweep-0-aaaa", "0", RECLAIM, WRITTEN, {"0": [saving]})
    assert judged.save is Save.CUT_SHORT and judged.saving_when_killed
    assert judged.save_source == "status.json: a save begun after SIGTERM never recorded done"
    done = {**STRADDLING, "save_began_at": SIGNAL + 0.1}
    assert judge_save("sweep-0-aaaa", "0", RECLAIM, LEFT, {"0": [done]}).save is Save.COMPLETED


def test_a_save_from_before_sigterm_still_running_is_saving_when_killed() -> None:
    """Not the save the reclaim asked for (unseen), but the pod was killed inside a save."""
    saving = {**STRADDLING, "exit_reason": "saving", "seconds_left_after_save": None}
    judged = judge_save("sweep-0-aaaa", "0", RECLAIM, None, {"0": [saving]})
    assert judged.save is Save.UNSEEN and judged.saving_when_killed


def test_the_status_run_gives_the_library_facts_and_the_next_pod() -> None:
    judged = judge_save("sweep-0-aaaa", "0", RECLAIM, WRITTEN, {"0": [STRADDLING, NEXT]})
    assert judged == SaveJudged(
        Save.UNSEEN,
        None,
        (),
        False,
        True,
        uses_library=True,
        checkpointed_step=12,
        reached_step=13,
        checkpoint_every=6,
        next_pod="sweep-0-bbbb",
        next_resumed_from=12,
    )
    # the pod's run is found among others, by its name, and the next is the one after it
    runs = {"0": [{"pod": "sweep-0-0000"}, STRADDLING, {**NEXT, "resumed_from": None}]}
    later = judge_save("sweep-0-aaaa", "0", RECLAIM, WRITTEN, runs)
    assert (later.next_pod, later.next_resumed_from) == ("sweep-0-bbbb", None)


def test_another_index_status_file_is_not_looked_in() -> None:
    """Two pods reclaimed at once both match by signal time: only the pod's own index's file."""
    unnamed = {k: v for k, v in STRADDLING.items() if k != "pod"}
    saving = {**unnamed, "save_began_at": SIGNAL + 0.1, "exit_reason": "saving"}
    runs = {"0": [unnamed], "1": [saving]}
    assert judge_save("sweep-1-aaaa", "1", RECLAIM, None, runs).save is Save.CUT_SHORT
    assert judge_save("sweep-0-aaaa", "0", RECLAIM, None, runs).save is Save.UNSEEN


def test_a_volume_not_readable_shows_nothing() -> None:
    assert judge_save("sweep-0-aaaa", "0", RECLAIM, None, {}) == SaveJudged(
        Save.UNSEEN, None, (), False, False
    )
    # status runs read some other way (not from the volume) still judge
    judged = judge_save("sweep-0-aaaa", "0", RECLAIM, None, {"0": [STRADDLING]})
    assert judged.uses_library and not judged.volume_readable


def test_files_cut_short_in_place_are_named_whatever_the_judge_says() -> None:
    shrunk = VolumeSeen(BEFORE, {"0/step-10.ckpt": FileSeen(40, 1, 1002.0)})
    done = {**STRADDLING, "save_began_at": SIGNAL + 0.1}
    judged = judge_save("sweep-0-aaaa", "0", RECLAIM, shrunk, {"0": [done]})
    assert judged.save is Save.COMPLETED and judged.shrunk_files == ("0/step-10.ckpt",)
    assert judge_save("sweep-0-aaaa", "0", RECLAIM, shrunk, {}).shrunk_files == ("0/step-10.ckpt",)


def test_the_pods_own_named_run_wins_over_one_signalled_first() -> None:
    """Two runs in one index's status file, both signalled just after the reclaim: the one that
    names the pod is its run, not the first signalled."""
    other = {**STRADDLING, "pod": "sweep-0-zzzz", "signal_at": RECLAIM + 0.2}
    mine = {**STRADDLING, "save_began_at": SIGNAL + 0.1}
    judged = judge_save("sweep-0-aaaa", "0", RECLAIM, None, {"0": [other, mine]})
    assert judged.save is Save.COMPLETED


def test_another_indexs_files_on_the_volume_are_not_this_pods_save() -> None:
    theirs = VolumeSeen(BEFORE, {**BEFORE, "1/.partial-000000000003-9": FileSeen(5, 9, 1002.0)})
    assert judge_save("sweep-0-aaaa", "0", RECLAIM, theirs, {}).save is Save.UNSEEN
    assert judge_save("sweep-1-aaaa", "1", RECLAIM, theirs, {}).save is Save.CUT_SHORT
