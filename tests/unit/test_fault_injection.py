"""Faults the machines running the tests never produce on their own, injected: an EPERM from
`killpg` (a launcher that is not root, a group holding another user's process), a file removed
by another process between a listing and its `stat` or `unlink`. Each was once listed as an
equivalent mutant "because CI runs as root" or "because no test can hit that instant"; a fact
about a machine is no equivalence (issue 51)."""

from __future__ import annotations

import errno
import os
import signal
from pathlib import Path

import pytest

from together_drill.volume import observe
from together_worker import CheckpointStore, launcher
from together_worker.checkpoints import PARTIAL_PREFIX


@pytest.mark.parametrize(
    "error",
    [
        PermissionError(errno.EPERM, "Operation not permitted"),
        ProcessLookupError(errno.ESRCH, "No such process"),
    ],
    ids=["eperm", "esrch"],
)
def test_an_eperm_from_killpg_is_suppressed_like_a_group_already_gone(
    monkeypatch: pytest.MonkeyPatch, error: OSError
) -> None:
    sent: list[tuple[int, int]] = []

    def killpg(pgid: int, signum: int) -> None:
        sent.append((pgid, signum))
        raise error

    monkeypatch.setattr(os, "killpg", killpg)
    launcher._signal_group(4242, signal.SIGTERM)
    assert sent == [(4242, signal.SIGTERM)]


def test_another_error_from_killpg_still_escapes(monkeypatch: pytest.MonkeyPatch) -> None:
    def killpg(pgid: int, signum: int) -> None:
        raise OSError(errno.EINVAL, "Invalid argument")

    monkeypatch.setattr(os, "killpg", killpg)
    with pytest.raises(OSError, match="Invalid argument"):
        launcher._signal_group(4242, signal.SIGTERM)


def _removed_after_listing(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The first file of directory 0 is removed before its `lstat` (its siblings come after
    it): another process renamed or deleted it mid-walk. Returns the list that names it."""
    chosen: list[Path] = []
    lstat = Path.lstat

    def removed(self: Path) -> os.stat_result:
        if not chosen and self.parent.name == "0":
            chosen.append(self)
            os.unlink(self)
        return lstat(self)

    monkeypatch.setattr(Path, "lstat", removed)
    return chosen


def test_a_file_gone_mid_walk_leaves_the_rest_of_the_snapshot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = {"0/step-1.ckpt", "0/step-2.ckpt", "0/x.tmp", "1/step-1.ckpt", "status.json"}
    for name in names:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(b"x" * 8)
    chosen = _removed_after_listing(monkeypatch)
    seen = observe(tmp_path).files
    (gone,) = chosen
    assert set(seen) == names - {str(gone.relative_to(tmp_path))}


def _unlinked_by_another_process_first(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Every `unlink` finds its file already removed by another process."""
    raced: list[Path] = []
    unlink = Path.unlink

    def racing(self: Path, missing_ok: bool = False) -> None:
        unlink(self)  # the other process's
        raced.append(self)
        unlink(self, missing_ok=missing_ok)

    monkeypatch.setattr(Path, "unlink", racing)
    return raced


def test_prune_tolerates_a_checkpoint_removed_under_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = CheckpointStore(tmp_path, keep=1)
    for step in (1, 2):
        (tmp_path / f"step-{step:012d}.ckpt").write_bytes(b"x")
    raced = _unlinked_by_another_process_first(monkeypatch)
    store.prune()
    assert [p.name for p in raced] == ["step-000000000001.ckpt"]
    assert [c.step for c in store.checkpoints()] == [2]


def test_discarding_partials_tolerates_one_removed_under_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = CheckpointStore(tmp_path)
    partial = tmp_path / f"{PARTIAL_PREFIX}000000000003-7"
    partial.write_bytes(b"half")
    raced = _unlinked_by_another_process_first(monkeypatch)
    assert store.discard_partials() == [partial]
    assert raced == [partial] and not partial.exists()
