"""The drill run's pure helpers: which status-file run is a reclaimed pod's, and which files of
the volume count as checkpoints under their final names."""

from __future__ import annotations

from pathlib import Path

from together_drill.run import _files, _run_of, shrunk_in_place


def test_a_run_is_found_by_pod_name_else_by_the_signal_after_the_reclaim() -> None:
    runs: list[dict[str, object]] = [
        {"pod": "drill-0", "signal_at": 100.5},  # an Indexed Job's hostname, no POD_NAME
        {"pod": "drill-0", "signal_at": None},
    ]
    assert _run_of(runs, "drill-0-abcde", reclaimed_at=100.0) == 0
    assert _run_of(runs, "drill-0-abcde", reclaimed_at=90.0) is None  # signal long after
    named: list[dict[str, object]] = [{"pod": "drill-0-aaaaa", "signal_at": 50.0}, {"pod": "b"}]
    assert _run_of(named, "b", reclaimed_at=100.0) == 1


def test_temporary_and_hidden_files_are_not_checkpoints(tmp_path: Path) -> None:
    (tmp_path / "0").mkdir()
    (tmp_path / "0" / "model.ckpt").write_bytes(b"x" * 10)
    (tmp_path / "0" / ".partial-000000000002-7").write_bytes(b"x")
    (tmp_path / "0" / "model.ckpt.tmp").write_bytes(b"x")
    ckpt = tmp_path / "0" / "model.ckpt"
    assert _files(tmp_path) == {"0/model.ckpt": (10, ckpt.stat().st_ino)}


def test_only_a_file_cut_short_in_place_counts_as_partial(tmp_path: Path) -> None:
    """A checkpoint rewritten in place and killed mid-write keeps its inode and shrinks; a status
    file replaced atomically may shrink too (a shorter float) and is whole."""
    (tmp_path / "0").mkdir()
    in_place, atomic = tmp_path / "0" / "model.ckpt", tmp_path / "0" / "status.json"
    in_place.write_text("x" * 100)
    atomic.write_text('{"updated_at": 1733155200.123456}')
    before = _files(tmp_path)
    with in_place.open("r+") as f:  # truncated where it stands, as `open(path, "w")` does
        f.truncate(40)
    fresh = atomic.with_name(".status.json.partial")
    fresh.write_text('{"updated_at": 1733155200.1}')
    fresh.replace(atomic)
    after = _files(tmp_path)
    assert after["0/status.json"][0] < before["0/status.json"][0]  # it did shrink
    assert shrunk_in_place(before, after) == ("0/model.ckpt",)
