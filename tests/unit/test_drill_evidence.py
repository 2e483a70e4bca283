"""What the drill can see of a save begun after SIGTERM, with no cluster: the volume's files at
the reclaim and when the pod ended, and together_worker's status file. One row per way a save
shows (or does not)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from together_drill.evidence import (
    FileSeen,
    Snapshot,
    checkpoints,
    run_of,
    runs_for,
    save_from_files,
    save_from_status,
    shrunk_in_place,
    temporary,
)
from together_drill.verdict import Save
from together_drill.volume import observe

RECLAIM = 1000.0  # the reclaim's wall-clock time


def _f(size: int, inode: int, mtime: float) -> FileSeen:
    return FileSeen(size, inode, mtime)


OLD: Snapshot = {"0/step-10.ckpt": _f(100, 1, 900.0)}


@pytest.mark.parametrize(
    ("after", "save", "source"),
    [
        # an atomic save after SIGTERM: a new final name, no temporary left
        ({**OLD, "0/step-12.ckpt": _f(100, 2, 1001.0)}, Save.COMPLETED, "0/step-12.ckpt written"),
        # a file replaced by a rename after SIGTERM (same name, new inode): whole
        ({"0/step-10.ckpt": _f(90, 3, 1001.0)}, Save.COMPLETED, "0/step-10.ckpt written"),
        # torchrun's early kill: the trainer's state.json.tmp written after SIGTERM, left behind
        ({**OLD, "0/state.json.tmp": _f(40, 4, 1002.0)}, Save.CUT_SHORT, "state.json.tmp left"),
        # together_worker's own temporary name, left by a kill mid-save
        ({**OLD, "0/.partial-000000000012-7": _f(5, 5, 1002.0)}, Save.CUT_SHORT, ".partial-"),
        # a checkpoint rewritten in place and cut short: same inode, smaller
        ({"0/step-10.ckpt": _f(40, 1, 1002.0)}, Save.CUT_SHORT, "0/step-10.ckpt left unfinished"),
        # nothing written after SIGTERM: nothing to see
        (OLD, Save.UNSEEN, None),
        # a temporary file from before the reclaim is not this save's
        ({**OLD, "0/old.tmp": _f(5, 6, 950.0)}, Save.UNSEEN, None),
        # the worker's status file is no checkpoint, whatever it does after SIGTERM
        ({**OLD, "0/status.json": _f(300, 7, 1001.0)}, Save.UNSEEN, None),
        ({**OLD, "0/.partial-status.json-7": _f(3, 8, 1001.0)}, Save.UNSEEN, None),
    ],
    ids=[
        "atomic-new-name",
        "replaced-by-rename",
        "temporary-left",
        "worker-partial-left",
        "cut-short-in-place",
        "nothing-written",
        "old-temporary",
        "status-file",
        "status-file-partial",
    ],
)
def test_the_volume_shows_a_save_after_sigterm(
    after: Snapshot, save: Save, source: str | None
) -> None:
    seen, where = save_from_files(OLD, after, RECLAIM, index="0")
    assert seen is save
    if source is None:
        assert where is None
    else:
        assert where is not None and source in where


def test_another_indexs_files_are_not_this_pods_save() -> None:
    after = {**OLD, "1/step-3.ckpt": _f(10, 9, 1001.0), "1/x.tmp": _f(1, 10, 1001.0)}
    assert save_from_files(OLD, after, RECLAIM, index="0") == (Save.UNSEEN, None)
    assert save_from_files(OLD, after, RECLAIM, index="1")[0] is Save.CUT_SHORT
    flat = {"model.ckpt": _f(10, 11, 1001.0)}  # a volume with no index directories
    assert save_from_files({}, flat, RECLAIM, index="0")[0] is Save.COMPLETED


RUN: dict[str, Any] = {"pod": "p", "signal_at": 1000.5, "checkpointed_step": 12}


@pytest.mark.parametrize(
    ("run", "save"),
    [
        ({**RUN, "exit_reason": "reclaimed", "save_began_at": 1000.6}, Save.COMPLETED),
        ({**RUN, "exit_reason": "saving", "save_began_at": 1000.6}, Save.CUT_SHORT),
        # a periodic save begun before the signal proves nothing about the reclaim
        ({**RUN, "exit_reason": "reclaimed", "save_began_at": 999.0}, Save.UNSEEN),
        ({**RUN, "exit_reason": "saving", "save_began_at": 999.0}, Save.UNSEEN),
        ({**RUN, "signal_at": None, "exit_reason": "running"}, Save.UNSEEN),
        # an older library: no save_began_at, a save ended after the signal
        ({**RUN, "exit_reason": "reclaimed", "seconds_left_after_save": 5.0}, Save.COMPLETED),
        ({**RUN, "exit_reason": "saving"}, Save.CUT_SHORT),
        ({**RUN, "exit_reason": "reclaimed"}, Save.UNSEEN),
    ],
    ids=[
        "saved-after-signal",
        "still-saving",
        "old-save-done",
        "old-save-running",
        "no-signal",
        "older-library-saved",
        "older-library-saving",
        "older-library-no-save",
    ],
)
def test_the_status_file_shows_a_save_after_sigterm(run: dict[str, Any], save: Save) -> None:
    assert save_from_status(run)[0] is save


def test_a_run_is_found_by_pod_name_else_by_the_signal_after_the_reclaim() -> None:
    runs: list[dict[str, object]] = [
        {"pod": "drill-0", "signal_at": 100.5},  # an Indexed Job's hostname, no POD_NAME
        {"pod": "drill-0", "signal_at": None},
    ]
    assert run_of(runs, "drill-0-abcde", reclaimed_at=100.0) == 0
    assert run_of(runs, "drill-0-abcde", reclaimed_at=90.0) is None
    named: list[dict[str, Any]] = [{"pod": "drill-0-aaaaa", "signal_at": 50.0}, {"pod": "b"}]
    assert run_of(named, "b", reclaimed_at=100.0) == 1


def test_a_pod_reads_its_own_indexs_status_file(tmp_path: Path) -> None:
    for index in ("0", "1"):
        (tmp_path / index).mkdir()
        (tmp_path / index / "status.json").write_text(f'{{"runs": [{{"pod": "i{index}"}}]}}')
    found = observe(tmp_path).runs
    assert runs_for(found, "1") == [[{"pod": "i1"}]]
    assert len(runs_for(found, None)) == 2 and len(runs_for(found, "7")) == 2


def test_temporary_and_hidden_files_are_not_checkpoints(tmp_path: Path) -> None:
    (tmp_path / "0").mkdir()
    (tmp_path / "0" / "model.ckpt").write_bytes(b"x" * 10)
    (tmp_path / "0" / ".partial-000000000002-7").write_bytes(b"x")
    (tmp_path / "0" / "model.ckpt.tmp").write_bytes(b"x")
    ckpt = tmp_path / "0" / "model.ckpt"
    found = observe(tmp_path).files
    assert len(found) == 3  # every file is seen, temporary ones too
    assert checkpoints(found) == {
        "0/model.ckpt": FileSeen(10, ckpt.stat().st_ino, os.stat(ckpt).st_mtime)
    }


def test_only_a_file_cut_short_in_place_counts_as_partial(tmp_path: Path) -> None:
    """A checkpoint rewritten in place and killed mid-write keeps its inode and shrinks; a status
    file replaced atomically may shrink too (a shorter float) and is whole."""
    (tmp_path / "0").mkdir()
    in_place, atomic = tmp_path / "0" / "model.ckpt", tmp_path / "0" / "status.json"
    in_place.write_text("x" * 100)
    atomic.write_text('{"updated_at": 1733155200.123456}')
    before = observe(tmp_path).files
    with in_place.open("r+") as f:  # truncated where it stands, as `open(path, "w")` does
        f.truncate(40)
    fresh = atomic.with_name(".status.json.partial")
    fresh.write_text('{"updated_at": 1733155200.1}')
    fresh.replace(atomic)
    after = observe(tmp_path).files
    assert after["0/status.json"].size < before["0/status.json"].size  # it did shrink
    assert shrunk_in_place(before, after) == ("0/model.ckpt",)


def test_a_name_is_temporary_by_its_last_part_only() -> None:
    assert temporary("0/run.d/.lock") and temporary("0/run.d/model.ckpt.tmp")
    assert not temporary("0/.cache/model.ckpt") and not temporary("0/x.tmp/model.ckpt")


def test_the_volume_names_every_file_of_the_save_it_saw() -> None:
    left = {**OLD, "0/a.tmp": _f(1, 20, 1001.0), "0/b.tmp": _f(1, 21, 1001.0)}
    assert save_from_files(OLD, left, RECLAIM, index="0") == (
        Save.CUT_SHORT,
        "the volume: 0/a.tmp, 0/b.tmp left unfinished",
    )
    written = {**OLD, "0/a.ckpt": _f(1, 22, 1001.0), "0/b.ckpt": _f(1, 23, 1001.0)}
    assert save_from_files(OLD, written, RECLAIM, index="0") == (
        Save.COMPLETED,
        "the volume: 0/a.ckpt, 0/b.ckpt written after SIGTERM",
    )


def test_a_file_written_at_the_reclaims_very_second_is_this_saves() -> None:
    """`since` is the reclaim's time: a file stamped with it was written after SIGTERM."""
    at = {**OLD, "0/a.tmp": _f(1, 20, RECLAIM)}
    assert save_from_files(OLD, at, RECLAIM, index="0")[0] is Save.CUT_SHORT
    whole = {**OLD, "0/a.ckpt": _f(1, 22, RECLAIM)}
    assert save_from_files(OLD, whole, RECLAIM, index="0")[0] is Save.COMPLETED
    untouched = {"0/step-10.ckpt": _f(100, 1, RECLAIM)}  # the same file seen before and after
    assert save_from_files(untouched, untouched, RECLAIM, index="0") == (Save.UNSEEN, None)


def test_an_index_directory_holds_subdirectories() -> None:
    after = {"0/run/a.ckpt": _f(1, 30, 1001.0), "1/run/b.ckpt": _f(1, 31, 1001.0)}
    assert save_from_files({}, after, RECLAIM, index="0") == (
        Save.COMPLETED,
        "the volume: 0/run/a.ckpt written after SIGTERM",
    )
    # a directory named like the status file does not hide the checkpoints in it
    inside = {"0/status.json.d/a.ckpt": _f(1, 32, 1001.0)}
    assert save_from_files({}, inside, RECLAIM, index="0")[0] is Save.COMPLETED


@pytest.mark.parametrize(
    ("run", "sentence"),
    [
        (
            {**RUN, "exit_reason": "saving", "save_began_at": 1000.5},
            (Save.CUT_SHORT, "status.json: a save begun after SIGTERM never recorded done"),
        ),
        (
            {**RUN, "exit_reason": "reclaimed", "save_began_at": 1000.5},
            (Save.COMPLETED, "status.json: a save begun after SIGTERM recorded done"),
        ),
        (
            {**RUN, "exit_reason": "reclaimed", "seconds_left_after_save": 5.0},
            (Save.COMPLETED, "status.json: a save recorded done after SIGTERM"),
        ),
    ],
    ids=["cut-short", "completed", "older-library-completed"],
)
def test_the_status_file_says_what_it_recorded(
    run: dict[str, Any], sentence: tuple[Save, str]
) -> None:
    """A save begun at the very time of the signal counts as begun after it."""
    assert save_from_status(run) == sentence


def test_a_status_file_without_runs_or_unreadable_is_skipped(tmp_path: Path) -> None:
    for index in range(10):
        (tmp_path / f"bad{index}").mkdir()
        (tmp_path / f"bad{index}" / "status.json").write_text("{not json")
        (tmp_path / f"ok{index}").mkdir()
        (tmp_path / f"ok{index}" / "status.json").write_text('{"runs": [{"pod": "p"}]}')
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "status.json").write_text("{}")
    found = observe(tmp_path).runs
    assert found == {"empty": [], **{f"ok{i}": [{"pod": "p"}] for i in range(10)}}


def test_a_run_signalled_within_five_seconds_of_the_reclaim_is_the_pods() -> None:
    assert run_of([{"signal_at": 100.0}], "x", reclaimed_at=100.0) == 0
    assert run_of([{"signal_at": 104.9}], "x", reclaimed_at=100.0) == 0
    assert run_of([{"signal_at": 105.0}], "x", reclaimed_at=100.0) is None
    assert run_of([{"signal_at": 99.9}], "x", reclaimed_at=100.0) is None
