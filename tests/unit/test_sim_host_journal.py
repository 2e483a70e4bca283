"""The journal of host changes and the kernel settings' holders, on a stand-in ``/run/together-sim``
and cgroup root under ``tmp_path``: the undo order, its idempotence, a failed undo kept for the
next sweep, a process told apart from a later one with its pid, the sweep and ``cleanup``.

tests/integration/test_real_node_crashes.py kills real simulators and checks the real host."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from testkit.wait import wait_for
from together_sim.__main__ import cleanup
from together_sim.host import cgroups, journal, processes, shared, sysctls
from together_sim.host.journal import Journal, Owner, Undone


@pytest.fixture
def run_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """``/run/together-sim`` and ``/sys/fs/cgroup`` (one v2 root) under ``tmp_path``."""
    run = tmp_path / "run" / "together-sim"
    cgroup_root = tmp_path / "cgroup"
    cgroup_root.mkdir()
    (cgroup_root / "cgroup.controllers").write_text("cpu memory pids\n")
    (cgroup_root / "cgroup.subtree_control").write_text("")
    monkeypatch.setattr(shared, "RUN_DIR", run)
    monkeypatch.setattr(shared, "LOCK", run / ".lock")
    monkeypatch.setattr(shared, "JOURNALS", run / "journals")
    monkeypatch.setattr(sysctls, "SHARED_SETTINGS", run / "sysctls.json")
    monkeypatch.setattr(cgroups, "CGROUP_ROOT", cgroup_root)
    yield run


@pytest.fixture
def undone(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """A kind of change, ``mark``, whose undo notes its name here (``fail`` names fail once)."""
    seen: list[str] = []
    failing: set[str] = set()

    def undo_mark(name: str, fail: bool = False) -> Undone:
        seen.append(name)
        if fail and name not in failing:
            failing.add(name)
            return Undone(left=[f"mark {name}"])
        return Undone(removed=[f"mark {name}"])

    monkeypatch.setitem(journal.UNDO, "mark", undo_mark)
    return seen


def test_a_journal_is_undone_last_change_first(run_dir: Path, undone: list[str]) -> None:
    j = Journal.create(shared.JOURNALS / "pool-1.jsonl")
    for name in ("directory", "netns", "cgroup", "process"):
        j.record("mark", name=name)
    assert j.undo().removed == [f"mark {n}" for n in ("process", "cgroup", "netns", "directory")]
    assert undone == ["process", "cgroup", "netns", "directory"]
    assert not j.path.exists()  # nothing left: the journal goes


def test_undoing_twice_and_undoing_what_was_never_made_change_nothing(
    run_dir: Path, tmp_path: Path
) -> None:
    made = tmp_path / "node"
    (made / "logs").mkdir(parents=True)
    cert = tmp_path / "node.crt"
    cert.write_text("x")
    j = Journal.create(shared.JOURNALS / "pool-1.jsonl")
    j.record("directory", path=str(made))
    j.record("file", path=str(cert))
    j.record("directory", path=str(tmp_path / "never-made"))  # the kill came before the mkdir
    j.record("cgroup", relative="together-sim/tsim9-n0")  # never made either
    first = j.undo()
    assert first.left == [] and not made.exists() and not cert.exists()
    assert j.undo() == Undone()  # the journal is gone: a second undo is a no-op
    again = Journal.create(shared.JOURNALS / "pool-2.jsonl")  # the same changes, all gone now
    for change in Journal.load(shared.JOURNALS / "pool-1.jsonl").changes() or []:
        again.record(change.kind, **change.args)
    again.record("directory", path=str(made))
    again.record("file", path=str(cert))
    assert again.undo().left == []


def test_a_failed_undo_is_kept_for_the_next_sweep_and_the_rest_goes_on(
    run_dir: Path, undone: list[str]
) -> None:
    j = Journal.create(shared.JOURNALS / "pool-1.jsonl")
    j.record("mark", name="a")
    j.record("mark", name="busy", fail=True)
    j.record("mark", name="c")
    first = j.undo()
    assert first.left == ["mark busy"] and undone == ["c", "busy", "a"]
    assert [c.args["name"] for c in Journal.load(j.path).changes()] == ["busy"]
    assert Journal.load(j.path).undo().left == []
    assert not j.path.exists()


def test_a_forgotten_change_and_a_torn_last_line_are_not_undone(
    run_dir: Path, undone: list[str]
) -> None:
    j = Journal.create(shared.JOURNALS / "pool-1.jsonl")
    j.record("mark", name="kept")
    j.forget(j.record("mark", name="someone-elses-bridge"))
    with j.path.open("a") as out:
        out.write('{"seq": 9, "kind": "ma')  # killed in the middle of a write
    j.undo()
    assert undone == ["kept"]


def test_a_kind_of_change_with_no_undo_is_refused(run_dir: Path) -> None:
    j = Journal.create(shared.JOURNALS / "pool-1.jsonl")
    with pytest.raises(ValueError, match="no undo"):
        j.record("bridge-of-sighs", name="x")


def test_a_change_whose_arguments_its_undo_cannot_take_is_refused_when_recorded(
    run_dir: Path,
) -> None:
    """Checked at record time, not at the undo (which may run in another process, after the
    one that wrote the entry is gone): a wrong name, a missing one, one too many."""
    j = Journal.create(shared.JOURNALS / "pool-1.jsonl")
    with pytest.raises(ValueError, match=r"'cgroup' change with \['path'\].*takes \['relative'\]"):
        j.record("cgroup", path="together-sim/x")
    with pytest.raises(ValueError, match="'process' change"):
        j.record("process", pid=1, name="kubelet")  # no start time
    with pytest.raises(ValueError, match="'file' change"):
        j.record("file", path="/x", mode=0o600)
    with pytest.raises(ValueError, match="'forget' change"):
        j.record("forget", seq=1)
    assert j.changes() == []  # nothing was written
    j.record("cgroup", relative="together-sim/x")
    j.record("sysctls", holder="h")  # an optional argument of the undo may be left out
    assert [c.kind for c in j.changes()] == ["cgroup", "sysctls"]


def test_a_process_is_its_pid_and_its_start_time(run_dir: Path) -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        started = processes.process_started(child.pid)
        assert started is not None
        j = Journal.create(shared.JOURNALS / "pool-1.jsonl")
        # The test's own pid with another start time: a later process that got a dead one's pid.
        j.record("process", pid=os.getpid(), started=started - 1, name="reused")
        j.record("process", pid=child.pid, started=started, name="child")
        assert j.undo().left == []
        assert child.wait(5) == -9  # killed
        # ...and this process, whose pid was in the journal with another start time, runs on.
        assert Owner(os.getpid(), started - 1).alive() is False
        assert Owner.me().alive()
    finally:
        child.kill()


def _settings(run_dir: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The three kernel settings, in a dict instead of /proc/sys."""
    values = {"vm/overcommit_memory": "0", "kernel/panic": "1", "kernel/panic_on_oops": "0"}
    monkeypatch.setattr(sysctls, "read_sysctls", lambda names=(): dict(values))
    monkeypatch.setattr(sysctls, "write_sysctls", values.update)
    return values


KUBELET = {"vm/overcommit_memory": "1", "kernel/panic": "10", "kernel/panic_on_oops": "1"}


def test_the_last_holder_out_restores_the_kernel_settings(
    run_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    values = _settings(run_dir, monkeypatch)
    me, other = sysctls.holder(os.getpid(), "a"), sysctls.holder(os.getpid(), "b")
    assert sysctls.hold_sysctls(me) == {**values}
    values.update(KUBELET)  # the first kubelet starts
    assert sysctls.hold_sysctls(other)["kernel/panic"] == "1"  # the original, not the rewrite
    sysctls.release_sysctls(me)
    assert values == KUBELET  # another holder still has real nodes
    assert json.loads(sysctls.SHARED_SETTINGS.read_text())["holders"] == [other]
    sysctls.release_sysctls(other)
    assert values["kernel/panic"] == "1" and values["vm/overcommit_memory"] == "0"
    assert not sysctls.SHARED_SETTINGS.exists()
    sysctls.release_sysctls(other)  # again: nothing held, nothing written
    assert values["kernel/panic"] == "1"


def test_a_holder_whose_pid_was_reused_holds_nothing(
    run_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A simulator killed with SIGKILL never releases; its pid may now be another process's
    (here this very test's pid, with another start time): that holder no longer counts, so the
    last live holder out restores the settings."""
    values = _settings(run_dir, monkeypatch)
    started = processes.process_started(os.getpid())
    killed = f"{os.getpid()}@{(started or 0) - 1}:/killed/state/kube"
    run_dir.mkdir(parents=True)  # the record as the killed simulator left it, its kubelet ran
    shared.save_json(sysctls.SHARED_SETTINGS, {"original": dict(values), "holders": [killed]})
    values.update(KUBELET)
    live = sysctls.holder(os.getpid(), "/live/state/kube")
    sysctls.hold_sysctls(live)
    holders = json.loads(sysctls.SHARED_SETTINGS.read_text())["holders"]
    assert holders == [live]  # the dead one was dropped at the next update
    sysctls.release_sysctls(live)
    assert values["kernel/panic"] == "1" and not sysctls.SHARED_SETTINGS.exists()
    assert sysctls.holder_alive(live) and not sysctls.holder_alive(killed)
    assert sysctls.holder_alive(f"{os.getpid()}:/written/by/an/older/simulator")
    assert not sysctls.holder_alive("2147483646@5:/gone")


def test_a_sweep_undoes_only_the_journals_whose_simulator_is_gone(
    run_dir: Path, undone: list[str]
) -> None:
    live = Journal.create(shared.JOURNALS / "pool-live.jsonl")
    live.record("mark", name="live")
    dead = Journal.create(shared.JOURNALS / "pool-dead.jsonl", Owner(os.getpid(), -5))
    node = dead.new_child("node-0")
    dead.record("mark", name="bridge")
    node.record("mark", name="node-netns")
    torn = shared.JOURNALS / "pool-torn.jsonl"
    torn.write_text('{"own')  # an unreadable owner is never alive: swept
    (shared.JOURNALS / ".pool-dead.jsonl.tmp").write_text("")  # a rewrite cut short by a kill
    (shared.JOURNALS / ".pool-live.jsonl.tmp").write_text("")  # a live one's, being written
    done = journal.sweep()
    assert undone == ["bridge", "node-netns"]  # the pool's last change first, then its node
    assert sorted(p.name for p in shared.JOURNALS.iterdir()) == [
        ".pool-live.jsonl.tmp",
        "pool-live.jsonl",
    ]
    assert "mark node-netns" in done.removed and done.left == []


def test_the_last_one_out_removes_the_lock_the_journals_and_the_run_directory(
    run_dir: Path, undone: list[str]
) -> None:
    j = Journal.create(shared.JOURNALS / "pool-dead.jsonl", Owner(os.getpid(), -5))
    j.record("mark", name="x")
    (cgroups.CGROUP_ROOT / "together-sim").mkdir()
    done = journal.sweep()
    assert not run_dir.exists() and not (cgroups.CGROUP_ROOT / "together-sim").exists()
    assert f"directory {run_dir}" in done.removed
    with shared.host_lock():  # and the lock works again afterwards
        assert shared.LOCK.exists()


def test_cleanup_prints_what_it_removed_and_fails_when_something_is_left(
    run_dir: Path,
    undone: list[str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    assert cleanup() == 0
    assert "nothing to remove" in capsys.readouterr().out
    j = Journal.create(shared.JOURNALS / "pool-dead.jsonl", Owner(os.getpid(), -5))
    j.record("mark", name="veth")
    j.record("mark", name="stuck", fail=True)
    assert cleanup() == 1
    out = capsys.readouterr()
    assert "removed mark veth" in out.out and "left mark stuck" in out.err
    assert cleanup() == 0  # the kept entry, tried again
    assert "removed mark stuck" in capsys.readouterr().out
    assert not run_dir.exists()


def test_cgroup_v2_delegates_its_controllers_down_to_the_nodes_cgroup(run_dir: Path) -> None:
    """The v2 layout: each level below the root enables its controllers for its children
    (``+cpu +memory``...), as the kubelet needs below the node's cgroup, and the leaf the node's
    processes run in delegates none (v2 admits processes only there). The root's delegation is
    the host's: never written, only checked. Plain files stand in for cgroup2's here;
    tests/integration/test_cgroup_v2.py uses a real cgroup2 mount."""
    root = cgroups.CGROUP_ROOT
    assert "cpu, memory, pids controllers delegated" in cgroups.v2_unavailable()
    (root / "cgroup.subtree_control").write_text("cpu memory pids")  # as systemd leaves it
    assert cgroups.v2_unavailable() == ""

    def fake_cgroup(path: Path) -> None:  # what the kernel makes in a new v2 cgroup
        (path / "cgroup.controllers").write_text(
            (path.parent / "cgroup.subtree_control").read_text().replace("+", "")
        )
        (path / "cgroup.subtree_control").write_text("")
        (path / "cgroup.procs").write_text("")

    original_mkdir = Path.mkdir

    def mkdir(self: Path, *args: object, **kwargs: object) -> None:
        original_mkdir(self, *args, **kwargs)  # type: ignore[arg-type]
        if self.is_relative_to(root):
            fake_cgroup(self)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Path, "mkdir", mkdir)
        cgroups.make_cgroup("together-sim/tsim0-n1")
        cgroups.make_cgroup("together-sim/tsim0-n1/runtime", leaf=True)
    assert cgroups.cgroup_dirs("together-sim/tsim0-n1") == [root / "together-sim" / "tsim0-n1"]
    assert (root / "cgroup.subtree_control").read_text() == "cpu memory pids"  # untouched
    for level in (root / "together-sim", root / "together-sim" / "tsim0-n1"):
        assert (level / "cgroup.subtree_control").read_text() == "+cpu +memory +pids"
    assert (root / "together-sim/tsim0-n1/runtime/cgroup.subtree_control").read_text() == ""
    # A process joins the cgroup before its program runs (its own pid, as the program's).
    joined = subprocess.run(
        cgroups.in_cgroup("together-sim/tsim0-n1/runtime", ["sh", "-c", "echo $$"]),
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    procs = root / "together-sim" / "tsim0-n1" / "runtime" / "cgroup.procs"
    assert procs.read_text().strip() == joined.stdout.strip()
    # A cgroup it cannot join ends the start (121), never a process outside it.
    lost = subprocess.run(cgroups.in_cgroup("together-sim/gone", ["echo", "ran"]),
                          capture_output=True, text=True)  # fmt: skip
    assert lost.returncode == 121 and "ran" not in lost.stdout


def test_a_started_process_is_in_the_journal_in_its_own_session_and_undone(
    run_dir: Path, tmp_path: Path
) -> None:
    """``Journal.start_process``: the one way the simulator starts a host process for a node or
    the image seed. A process sharing the simulator's session would get its terminal's Ctrl-C
    before the simulator could stop it in order."""
    (cgroups.CGROUP_ROOT / "together-sim" / "test").mkdir(parents=True)
    j = Journal.create(shared.JOURNALS / "pool-1.jsonl")
    out = tmp_path / "sleep.log"
    proc = j.start_process("sleeper", ["sleep", "60"], out, cgroup="together-sim/test")
    try:
        (entry,) = [c for c in j.changes() if c.kind == "process"]
        assert entry.args == {
            "pid": proc.pid,
            "started": processes.process_started(proc.pid),
            "name": "sleeper",
        }
        assert os.getsid(proc.pid) == proc.pid != os.getsid(0)
        procs = cgroups.CGROUP_ROOT / "together-sim" / "test" / "cgroup.procs"
        deadline = time.monotonic() + 10
        while not procs.exists() or str(proc.pid) not in procs.read_text().split():
            assert proc.poll() is None and time.monotonic() < deadline, "it never joined"
            time.sleep(0.01)
        assert j.undo().removed == [f"process {proc.pid} sleeper"]
        assert proc.wait(5) == -9
    finally:
        if proc.poll() is None:
            proc.kill()


def test_a_killed_owner_its_parent_has_not_reaped_is_not_alive() -> None:
    """A simulator killed with SIGKILL stays a zombie until its parent reaps it: its journal is
    an orphan's from the kill on (``cleanup`` and the sweep undo it), and its holds go too."""
    child = subprocess.Popen(["sleep", "60"])
    try:
        owner = Owner(child.pid, processes.process_started(child.pid))
        holds = sysctls.holder(child.pid, "/killed/kube")
        assert owner.alive() and sysctls.holder_alive(holds)
        os.kill(child.pid, signal.SIGKILL)
        wait_for(lambda: processes.zombie(child.pid), "the child to be a zombie", timeout=10)
        assert processes.process_started(child.pid) is not None  # still there, unreaped
        assert not owner.alive() and not sysctls.holder_alive(holds)
    finally:
        child.kill()
        child.wait()
