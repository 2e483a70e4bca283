"""The drill run's pure helpers: which status-file run is a reclaimed pod's, and which files of
the volume count as checkpoints under their final names."""

from __future__ import annotations

from pathlib import Path

from together_sim.drill.run import _files, _run_of


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
    assert _files(tmp_path) == {"0/model.ckpt": 10}
