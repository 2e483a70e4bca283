"""together_worker in one process: the reclaim's flag and deadline on a fake clock, handler
chaining with real signals, atomic checkpoints kept to K, and what the status file records."""

from __future__ import annotations

import io
import json
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import pytest

from tests.fake_time import FakeTime
from together_worker import CheckpointStore, Reclaim, StatusFile, Worker, grace_from_env
from together_worker.checkpoints import Checkpoint, index_directory


@pytest.fixture
def restore_handlers() -> Iterator[None]:
    saved = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    yield
    for signum, handler in saved.items():
        signal.signal(signum, handler)


def test_the_reclaim_is_a_flag_and_a_deadline_counted_from_the_signal() -> None:
    clock = FakeTime(start=100.0)
    reclaim = Reclaim(grace_seconds=30, clock=clock.clock, wall_clock=lambda: 1_700_000_000.0)
    assert not reclaim.requested and reclaim.seconds_left() is None
    clock.sleep(5)
    reclaim.notice(signal.SIGTERM)
    clock.sleep(12)
    reclaim.notice(signal.SIGINT)  # a second signal neither restarts nor replaces the first
    assert reclaim.requested and reclaim.signal_name == "SIGTERM"
    assert reclaim.seconds_left() == 18
    assert reclaim.received_at == 1_700_000_000.0
    assert reclaim.exit_code == 143
    clock.sleep(20)
    assert reclaim.seconds_left() == -2


def test_the_grace_comes_from_the_drain_window_variable() -> None:
    assert grace_from_env({}) == 300
    assert grace_from_env({"DRAIN_WINDOW_SECONDS": "45"}) == 45
    with pytest.raises(ValueError, match=r"DRAIN_WINDOW_SECONDS='soon'.*terminationGrace"):
        grace_from_env({"DRAIN_WINDOW_SECONDS": "soon"})
    with pytest.raises(ValueError, match="DRAIN_WINDOW_SECONDS='0'"):
        grace_from_env({"DRAIN_WINDOW_SECONDS": "0"})


@pytest.mark.usefixtures("restore_handlers")
def test_installing_chains_to_a_frameworks_handler() -> None:
    framework_saw: list[int] = []
    signal.signal(signal.SIGTERM, lambda signum, _frame: framework_saw.append(signum))
    reclaim = Reclaim.install(grace_seconds=60)
    signal.raise_signal(signal.SIGTERM)  # a real signal, handled before this line returns
    assert reclaim.requested and reclaim.signal_name == "SIGTERM"
    assert framework_saw == [signal.SIGTERM]
    reclaim.uninstall()
    signal.raise_signal(signal.SIGTERM)
    assert framework_saw == [signal.SIGTERM, signal.SIGTERM]  # the framework's handler is back


@pytest.mark.usefixtures("restore_handlers")
def test_sigint_sets_the_flag_instead_of_raising_keyboard_interrupt_mid_step() -> None:
    signal.signal(signal.SIGINT, signal.default_int_handler)
    reclaim = Reclaim.install(grace_seconds=60)
    signal.raise_signal(signal.SIGINT)
    assert reclaim.requested and reclaim.exit_code == 130


def test_the_store_keeps_the_last_k_and_latest_is_the_newest(tmp_path: Path) -> None:
    store = CheckpointStore(tmp_path / "ckpt", keep=2)
    assert store.latest() is None
    for step in (10, 20, 30):
        store.save(step, f"state at {step}".encode())
    assert [c.step for c in store.checkpoints()] == [20, 30]
    latest = store.latest()
    assert latest is not None and latest.step == 30 and latest.read_bytes() == b"state at 30"


def test_a_writer_callback_streams_into_the_checkpoint(tmp_path: Path) -> None:
    store = CheckpointStore(tmp_path)

    def write(file: BinaryIO) -> None:
        for chunk in (b"a" * 10, b"b" * 10):
            file.write(chunk)

    assert store.save(7, write).read_bytes() == b"a" * 10 + b"b" * 10


def test_a_framework_writing_to_a_path_gets_a_temporary_one(tmp_path: Path) -> None:
    store = CheckpointStore(tmp_path)
    given: list[Path] = []

    def save_checkpoint(path: Path) -> None:  # what trainer.save_checkpoint(path) does
        given.append(path)
        assert store.latest() is None  # not visible while being written
        path.write_bytes(b"weights")

    saved = store.save_to_path(12, save_checkpoint)
    assert given[0].name.startswith(".partial-") and not given[0].exists()
    assert store.latest() == saved and saved.read_bytes() == b"weights"


def test_a_failed_save_leaves_no_partial_and_the_previous_latest(tmp_path: Path) -> None:
    store = CheckpointStore(tmp_path)
    store.save(1, b"good")

    def crash(file: BinaryIO) -> None:
        file.write(b"half")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        store.save(2, crash)
    latest = store.latest()
    assert latest is not None and (latest.step, latest.read_bytes()) == (1, b"good")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["step-000000000001.ckpt"]


def test_latest_never_reads_a_partial_and_a_new_store_discards_them(tmp_path: Path) -> None:
    store = CheckpointStore(tmp_path)
    store.save(1, b"good")
    (tmp_path / ".partial-000000000002-4242").write_bytes(b"half")
    latest = store.latest()
    assert latest is not None and latest.step == 1
    assert [p.name for p in store.discard_partials()] == [".partial-000000000002-4242"]


def test_the_directory_is_the_index_under_checkpoint_dir(tmp_path: Path) -> None:
    env = {"CHECKPOINT_DIR": str(tmp_path), "JOB_COMPLETION_INDEX": "3"}
    assert index_directory(env) == tmp_path / "3"
    assert index_directory({"CHECKPOINT_DIR": str(tmp_path)}) == tmp_path / "0"
    with pytest.raises(ValueError, match="CHECKPOINT_DIR is not set"):
        index_directory({})
    with pytest.raises(ValueError, match="JOB_COMPLETION_INDEX='a'"):
        index_directory({"CHECKPOINT_DIR": "/c", "JOB_COMPLETION_INDEX": "a"})
    with pytest.raises(ValueError, match="keep >= 1"):
        CheckpointStore(tmp_path, keep=0)


def _worker(directory: Path, clock: FakeTime, grace: float = 30) -> Worker:
    reclaim = Reclaim(grace_seconds=grace, clock=clock.clock, wall_clock=clock.clock)
    return Worker(
        CheckpointStore(directory, keep=2),
        reclaim,
        pod="sweep-0-abc",
        clock=clock.clock,
        wall_clock=clock.clock,
    )


def test_steps_checkpoint_every_n_and_at_the_end(tmp_path: Path) -> None:
    clock = FakeTime(start=1000.0)
    worker = _worker(tmp_path, clock)
    saved: list[int] = []
    state = {"step": 0}

    def save(file: BinaryIO) -> None:
        saved.append(state["step"])
        file.write(str(state["step"]).encode())

    for step in worker.steps(7, every=3, save=save):
        state["step"] = step + 1
    assert saved == [3, 6, 7]
    (run,) = StatusFile(tmp_path).runs()
    assert run["exit_reason"] == "completed" and run["exit_code"] == 0
    assert run["step"] == 7 and run["checkpointed_step"] == 7 and run["checkpoint_every"] == 3


def test_a_reclaim_checkpoints_at_the_next_step_and_exits_143(tmp_path: Path) -> None:
    clock = FakeTime(start=1000.0)
    worker = _worker(tmp_path, clock, grace=30)
    with pytest.raises(SystemExit) as stopped:
        for step in worker.steps(None, every=100, save=lambda f: f.write(b"x")):
            if step == 4:
                worker.reclaim.notice(signal.SIGTERM)  # mid-step: the step still completes
            clock.sleep(1)  # one step of work
    assert stopped.value.code == 143
    latest = worker.store.latest()
    assert latest is not None and latest.step == 5
    (run,) = StatusFile(tmp_path).runs()
    assert run["exit_reason"] == "reclaimed" and run["exit_code"] == 143
    assert run["signal"] == "SIGTERM" and run["signal_at"] == 1004.0
    assert run["checkpointed_step"] == 5 and run["step"] == 5
    assert run["seconds_left_after_save"] == 29.0  # signal at 1004, step ended at 1005
    assert run["save_seconds"] == 0.0
    assert run["save_began_at"] == 1005.0  # after the signal: the save the reclaim asked for


def test_a_signal_before_the_loop_checkpoints_and_exits_before_any_step(tmp_path: Path) -> None:
    clock = FakeTime()
    worker = _worker(tmp_path, clock)
    worker.reclaim.notice(signal.SIGTERM)
    ran: list[int] = []
    with pytest.raises(SystemExit) as stopped:
        ran.extend(worker.steps(10, start=4, every=2, save=lambda f: f.write(b"x")))
    assert stopped.value.code == 143 and ran == []
    latest = worker.store.latest()
    assert latest is not None and latest.step == 4


def test_each_pod_is_a_run_of_its_own_and_records_what_it_resumed_from(tmp_path: Path) -> None:
    clock = FakeTime(start=1000.0)
    first = _worker(tmp_path, clock)
    first.checkpoint(40, b"40")
    clock.sleep(1)
    second = _worker(tmp_path, clock)
    latest = second.latest()
    assert latest is not None and latest.step == 40
    runs = StatusFile(tmp_path).runs()
    assert [r["resumed_from"] for r in runs] == [None, 40]
    assert json.loads((tmp_path / "status.json").read_text())["runs"][1]["pod"] == "sweep-0-abc"


def test_the_status_shows_a_save_in_progress(tmp_path: Path) -> None:
    """A pod killed mid-save leaves `saving` behind: the drill reads it as a cut-off save."""
    clock = FakeTime()
    worker = _worker(tmp_path, clock)
    seen: list[str] = []

    def save(file: BinaryIO) -> None:
        seen.append(StatusFile(tmp_path).runs()[-1]["exit_reason"])
        file.write(b"x")

    worker.checkpoint(1, save)
    assert seen == ["saving"] and StatusFile(tmp_path).runs()[-1]["exit_reason"] == "running"
    assert io.BytesIO(worker.store.latest().read_bytes()).read() == b"x"  # type: ignore[union-attr]


@pytest.mark.parametrize("how", ["save", "save_to_path"])
def test_a_save_fsyncs_the_file_before_the_rename_and_the_directory_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """Without the file's fsync a crash may publish a name with no bytes behind it; without the
    directory's, a crash may bring back the old name."""
    import os
    import stat

    store = CheckpointStore(tmp_path)
    calls: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        calls.append("fsync directory" if stat.S_ISDIR(os.fstat(fd).st_mode) else "fsync file")
        real_fsync(fd)

    def replace(src: Any, dst: Any) -> None:
        calls.append("rename")
        real_replace(src, dst)

    monkeypatch.setattr(os, "fsync", fsync)  # the module's os is this one
    monkeypatch.setattr(os, "replace", replace)
    if how == "save":
        store.save(1, b"x")
    else:
        store.save_to_path(1, lambda path: path.write_bytes(b"x"))
    assert calls == ["fsync file", "rename", "fsync directory"]


def test_a_store_from_the_environment_is_this_indexs_directory_keeping_three(
    tmp_path: Path,
) -> None:
    env = {"CHECKPOINT_DIR": str(tmp_path), "JOB_COMPLETION_INDEX": "5"}
    store = CheckpointStore.from_env(environ=env)
    assert store.directory == tmp_path / "5" and store.directory.is_dir()
    for step in range(5):
        store.save(step, b"x")
    assert [c.step for c in store.checkpoints()] == [2, 3, 4]  # three kept by default
    assert CheckpointStore.from_env(keep=1, environ=env).keep == 1
    assert [c.step for c in CheckpointStore(tmp_path / "d").checkpoints()] == []
    default = CheckpointStore(tmp_path / "default")
    for step in range(4):
        default.save(step, b"x")
    assert [c.step for c in default.checkpoints()] == [1, 2, 3]


def test_a_store_makes_its_whole_path_and_may_keep_only_the_latest(tmp_path: Path) -> None:
    store = CheckpointStore(tmp_path / "a" / "b" / "c", keep=1)
    assert store.directory.is_dir()
    assert store.save(0, b"zero") == Checkpoint(0, store.directory / "step-000000000000.ckpt")
    saved = store.save_to_path(7, lambda path: path.write_bytes(b"seven"))
    assert saved == Checkpoint(7, store.directory / "step-000000000007.ckpt")
    assert store.checkpoints() == [saved] and saved.read_bytes() == b"seven"
    with pytest.raises(ValueError, match=r"^step=-1: a checkpoint holds a number of steps done"):
        store.save(-1, b"x")


def test_a_writer_that_fails_before_writing_anything_gets_its_own_error_back(
    tmp_path: Path,
) -> None:
    """The partial file was never created: cleaning it up must not hide why the save failed."""
    store = CheckpointStore(tmp_path)

    def fails(path: Path) -> None:
        raise RuntimeError("the framework could not serialise the model")

    with pytest.raises(RuntimeError, match="could not serialise"):
        store.save_to_path(1, fails)
    assert list(tmp_path.iterdir()) == []


def test_without_a_checkpoint_directory_the_error_says_where_it_must_point() -> None:
    with pytest.raises(ValueError) as caught:
        index_directory({})
    assert str(caught.value) == (
        "CHECKPOINT_DIR is not set: it names the directory on the shared volume that outlives "
        "the node; CheckpointingWorker sets it, elsewhere set it to such a directory"
    )
