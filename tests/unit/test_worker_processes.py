"""together_worker with real processes and real signals: a kill -9 in the middle of a save, SIGTERM
to checkpoint to exit 143 and a resume, and the launcher running a shell-wrapped command."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import together_worker
from together_worker import CheckpointStore, StatusFile
from together_worker.launcher import exit_code

ROOT = Path(__file__).resolve().parents[2]
WORKER_ROOT = Path(together_worker.__file__).resolve().parents[1]
"""Where this test's `together_worker` was imported from (`worker/`, or the mutated copy under
`make mutate`): the child processes import the very same code."""
LINE_BOUND_SECONDS = 30
"""A bound on waiting for a process's next line or its exit, not a timing: a broken worker or
launcher that hangs fails its test instead of hanging the run (each step takes well under a
second, but a loaded machine stretches a process start many times; `make mutate` pays the bound
for every mutant that hangs)."""

SLOW_SAVE = """
import sys
from together_worker import CheckpointStore

store = CheckpointStore(sys.argv[1])
store.save(1, b"A" * 4096)

def write_in_two_halves(file):
    file.write(b"B" * 2048)
    file.flush()
    print("mid-write", flush=True)
    sys.stdin.readline()  # the test kills the process here, half of checkpoint 2 on disk
    file.write(b"B" * 2048)

store.save(2, write_in_two_halves)
"""

TRAIN = """
import signal, sys
from together_worker import Worker

# A framework's own handler, installed first: the worker's handler chains to it.
signal.signal(signal.SIGTERM, lambda *_: print("got SIGTERM", flush=True))
worker = Worker.from_env(keep=2)
latest = worker.latest()
count = int(latest.read_bytes()) if latest else 0
total = int(sys.argv[1]) if len(sys.argv) > 1 else None
print("started", worker.run.resumed_from, flush=True)

def save(file):
    print("saving", flush=True)
    file.write(str(count).encode())

for step in worker.steps(total, start=latest.step if latest else 0, every=1000, save=save):
    print("step", step, flush=True)
    sys.stdin.readline()  # one step of work per line the test writes
    count += 1
"""


def _env(tmp_path: Path, pod: str) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join((str(WORKER_ROOT), str(ROOT))),
        "CHECKPOINT_DIR": str(tmp_path),
        "JOB_COMPLETION_INDEX": "3",
        "DRAIN_WINDOW_SECONDS": "120",
        "HOSTNAME": pod,
    }


_STARTED: list[subprocess.Popen[bytes]] = []


@pytest.fixture(autouse=True)
def _no_process_left() -> Iterator[None]:
    """A test that fails half-way leaves no process running, nor one ended but unreaped: a
    zombie would be reaped by whoever in this process waits for any child next (a test
    runner's own worker pool, under `make mutate`)."""
    yield
    while _STARTED:
        proc = _STARTED.pop()
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def _start(args: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
    """Unbuffered pipes: a line the process printed is never held in this side's buffer, where
    `select` would not see it."""
    proc = subprocess.Popen(
        args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0, env=env, cwd=ROOT
    )
    _STARTED.append(proc)
    return proc


def _exit(proc: subprocess.Popen[bytes]) -> int:
    """The process's exit status, once it has exited: a bound, like `_line`."""
    return proc.wait(timeout=LINE_BOUND_SECONDS)


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, env=env, cwd=ROOT, capture_output=True, text=True, timeout=LINE_BOUND_SECONDS
    )


def _line(proc: subprocess.Popen[bytes]) -> str:
    """The process's next line of output. A bound, not a timing: a broken worker that never
    prints fails here instead of hanging the run."""
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], LINE_BOUND_SECONDS)
    if not ready:
        proc.kill()
        pytest.fail(f"no output within {LINE_BOUND_SECONDS} s")
    return proc.stdout.readline().decode().strip()


def _send(proc: subprocess.Popen[bytes]) -> None:
    """One line on the process's stdin: one step of work."""
    assert proc.stdin is not None
    proc.stdin.write(b"\n")


def test_a_kill_9_in_the_middle_of_a_save_leaves_the_previous_checkpoint_latest(
    tmp_path: Path,
) -> None:
    proc = _start([sys.executable, "-c", SLOW_SAVE, str(tmp_path)], _env(tmp_path, "p"))
    assert _line(proc) == "mid-write"
    proc.kill()
    assert _exit(proc) == -signal.SIGKILL
    (partial,) = [p for p in tmp_path.iterdir() if p.name.startswith(".partial-")]
    assert partial.stat().st_size == 2048  # the kill did land mid-write
    latest = CheckpointStore(tmp_path).latest()
    assert latest is not None and latest.step == 1 and latest.read_bytes() == b"A" * 4096


def test_sigterm_checkpoints_then_exits_143_and_the_next_pod_resumes(tmp_path: Path) -> None:
    first = _start([sys.executable, "-c", TRAIN], _env(tmp_path, "sweep-3-aaaa"))
    assert _line(first) == "started None"
    for step in range(5):
        assert _line(first) == f"step {step}"
        _send(first)
    assert _line(first) == "step 5"
    first.send_signal(signal.SIGTERM)  # during step 5: it completes, then the checkpoint
    assert _line(first) == "got SIGTERM"
    _send(first)
    assert _line(first) == "saving"
    assert _exit(first) == 143
    store = CheckpointStore(tmp_path / "3")
    latest = store.latest()
    assert latest is not None and (latest.step, latest.read_bytes()) == (6, b"6")
    (reclaimed,) = StatusFile(tmp_path / "3").runs()
    assert reclaimed["pod"] == "sweep-3-aaaa" and reclaimed["exit_reason"] == "reclaimed"
    assert reclaimed["signal"] == "SIGTERM" and reclaimed["exit_code"] == 143
    assert reclaimed["checkpointed_step"] == 6 and reclaimed["step"] == 6
    assert 0 < reclaimed["seconds_left_after_save"] <= 120

    second = _start([sys.executable, "-c", TRAIN, "8"], _env(tmp_path, "sweep-3-bbbb"))
    assert _line(second) == "started 6"
    for step in (6, 7):
        assert _line(second) == f"step {step}"
        _send(second)
    assert _line(second) == "saving"
    assert _exit(second) == 0
    latest = store.latest()
    assert latest is not None and (latest.step, latest.read_bytes()) == (8, b"8")
    runs = StatusFile(tmp_path / "3").runs()
    assert [(r["resumed_from"], r["exit_reason"]) for r in runs] == [
        (None, "reclaimed"),
        (6, "completed"),
    ]


def _launcher(*command: str) -> list[str]:
    return [sys.executable, "-m", "together_worker", "run", "--", *command]


def test_the_launcher_passes_sigterm_through_a_shell_wrapper_and_waits_for_its_child(
    tmp_path: Path,
) -> None:
    """`sh -c 'python train.py; echo done'`: the shell dies of the signal at once, the worker
    under it gets it too (the launcher signals the group), and the launcher exits only once
    that worker has written its checkpoint, with 143."""
    script = tmp_path / "train.py"
    script.write_text("import os; print('group', os.getpgid(0), flush=True)\n" + TRAIN)
    wrapped = f"{sys.executable} -u {script}; echo the-shell-went-on"
    proc = _start(_launcher("sh", "-c", wrapped), _env(tmp_path, "sweep-3-cccc"))
    group = int(_line(proc).split()[1])
    assert _line(proc) == "started None"
    assert _line(proc) == "step 0"
    proc.send_signal(signal.SIGTERM)
    assert _line(proc) == "got SIGTERM"  # forwarded through the shell's group
    _send(proc)  # ends step 0 in the worker: it saw the flag, checkpoints and exits 143
    assert _line(proc) == "saving"
    assert _exit(proc) == 143
    with pytest.raises(ProcessLookupError):  # nothing of the group outlived the launcher
        os.killpg(group, 0)
    assert proc.stdout is not None and b"the-shell-went-on" not in proc.stdout.read()
    latest = CheckpointStore(tmp_path / "3").latest()
    assert latest is not None and latest.step == 1
    (run,) = StatusFile(tmp_path / "3").runs()
    assert run["exit_reason"] == "reclaimed"  # written just before the worker exited


PAUSES = "import signal; print('up', flush=True); signal.alarm(60); signal.pause()"
"""Waits for the reclaim signal; never for more than a minute, should a broken launcher never
forward it (the process is in a session of its own: nothing else would stop it)."""


def test_the_launcher_turns_a_child_stopped_by_sigterm_into_143(tmp_path: Path) -> None:
    proc = _start(
        _launcher(sys.executable, "-c", PAUSES),
        _env(tmp_path, "p"),
    )
    assert _line(proc) == "up"
    proc.send_signal(signal.SIGTERM)
    assert _exit(proc) == 143


def test_the_launcher_never_reports_0_after_a_forwarded_sigterm(tmp_path: Path) -> None:
    exits_zero = (
        "import signal, sys\n"
        "signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))\n"
        "print('up', flush=True)\n"
        "signal.alarm(60)\n"
        "signal.pause()"
    )
    proc = _start(_launcher(sys.executable, "-c", exits_zero), _env(tmp_path, "p"))
    assert _line(proc) == "up"
    proc.send_signal(signal.SIGTERM)
    assert _exit(proc) == 143


def test_the_launcher_keeps_a_commands_own_exit_code(tmp_path: Path) -> None:
    env = _env(tmp_path, "p")
    assert _run(_launcher("sh", "-c", "exit 3"), env).returncode == 3
    assert _run(_launcher("true"), env).returncode == 0
    missing = _run(_launcher("no-such-command-here"), env)
    assert missing.returncode == 127 and "cannot start 'no-such-command-here'" in missing.stderr
    empty = _run(_launcher(), env)
    assert empty.returncode == 2 and "no command given" in empty.stderr


@pytest.mark.parametrize(
    ("status", "forwarded", "code"),
    [
        (signal.SIGTERM, None, 143),  # a wait status: killed by SIGTERM
        (signal.SIGKILL, signal.SIGTERM, 137),
        (0, signal.SIGTERM, 143),  # exited 0 after the reclaim: cut short all the same
        (0, signal.SIGINT, 130),
        (0, None, 0),
        (143 << 8, signal.SIGTERM, 143),
        (1 << 8, None, 1),
    ],
)
def test_the_launchers_exit_code(status: int, forwarded: int | None, code: int) -> None:
    assert exit_code(status, forwarded) == code


def test_a_command_that_ends_on_its_own_has_its_leftovers_stopped_with_sigterm(
    tmp_path: Path,
) -> None:
    """`sh -c 'helper & exit 0'`: the command ends on its own (exit 0 stays 0), and what it left
    in its group gets SIGTERM first (it may save), not the SIGKILL that comes 10 s later."""
    marker = tmp_path / "leftover"
    helper = (
        "import signal, sys\n"
        f"signal.signal(signal.SIGTERM, lambda *_: (open({str(marker)!r}, 'w').write('term'), "
        "sys.exit(0)))\n"
        "print('helper up', flush=True)\n"
        "signal.pause()"
    )
    command = f'{sys.executable} -c "$0" & read line; exit 0'
    proc = _start(_launcher("sh", "-c", command, helper), _env(tmp_path, "p"))
    assert _line(proc) == "helper up"  # its handler is installed
    _send(proc)  # the shell reads its line and exits 0, leaving the helper running
    assert _exit(proc) == 0
    assert marker.read_text() == "term"


def test_the_launcher_cannot_run_a_file_that_is_not_executable(tmp_path: Path) -> None:
    """126, as a shell says for a command found but not runnable (127 is for one not found)."""
    script = tmp_path / "train.sh"
    script.write_text("#!/bin/sh\nexit 0\n")
    script.chmod(0o644)
    ran = _run(_launcher(str(script)), _env(tmp_path, "p"))
    assert ran.returncode == 126 and f"cannot start {str(script)!r}" in ran.stderr


SUBREAPER = """
import ctypes, sys
from together_worker.launcher import become_subreaper

became = become_subreaper()
flag = ctypes.c_int(0)
ctypes.CDLL(None).prctl(37, ctypes.byref(flag), 0, 0, 0)  # PR_GET_CHILD_SUBREAPER


def no_libc(*args, **kwargs):
    raise OSError("no C library here")


ctypes.CDLL = no_libc  # where there is no prctl (not Linux) it says it could not
print(became, flag.value, become_subreaper())
"""


def test_the_launcher_becomes_a_subreaper_and_says_so(tmp_path: Path) -> None:
    """In a process of its own: a subreaper inherits the orphans of everything it starts."""
    ran = _run([sys.executable, "-c", SUBREAPER], _env(tmp_path, "p"))
    assert ran.stdout.split() == ["True", "1", "False"]


LEAVES_A_HELPER = """
import os, signal, sys, time

marker, code, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
ready_r, ready_w = os.pipe()
if os.fork() == 0:  # a helper the command leaves behind in its process group
    signal.alarm(60)  # never outlives a broken launcher by more than a minute
    if mode == "holds":  # says so, and goes on
        signal.signal(signal.SIGTERM, lambda *_: print("got SIGTERM", flush=True))
    else:
        def stop(*_):
            with open(marker, "w") as file:
                file.write("SIGTERM")
            os._exit(0)
        signal.signal(signal.SIGTERM, stop)
    os.write(ready_w, b"x")
    while True:
        time.sleep(60)
os.read(ready_r, 1)
sys.exit(code)
"""

SHORT_GRACE = """
import sys
import together_worker.launcher as launcher
from together_worker.__main__ import main

launcher.LEFTOVER_GRACE_SECONDS = 3
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("code", [0, 3])
def test_the_launcher_stops_what_a_command_left_and_keeps_its_exit_code(
    tmp_path: Path, code: int
) -> None:
    """The command ended on its own: a helper it left in its group gets SIGTERM (not the end of
    the grace period), and the launcher exits with the command's own code, 0 included."""
    marker = tmp_path / "helper-got"
    helper = tmp_path / "helper.py"
    helper.write_text(LEAVES_A_HELPER)
    ran = _run(
        _launcher(sys.executable, str(helper), str(marker), str(code), "stops"),
        _env(tmp_path, "p"),
    )
    assert ran.returncode == code
    assert marker.read_text() == "SIGTERM"


def test_the_launcher_kills_a_leftover_that_ignores_sigterm_when_its_grace_ends(
    tmp_path: Path,
) -> None:
    """A reclaim signal that comes while a finished command's helper is still being stopped is
    passed on, but the command had finished: its 0 stands, and the helper that goes on after
    SIGTERM is killed when the (here 3 s) grace ends."""
    helper = tmp_path / "helper.py"
    helper.write_text(LEAVES_A_HELPER)
    command = [sys.executable, str(helper), str(tmp_path / "m"), "0", "holds"]
    proc = _start([sys.executable, "-c", SHORT_GRACE, "run", "--", *command], _env(tmp_path, "p"))
    assert _line(proc) == "got SIGTERM"  # the command ended; the launcher stopped its group
    proc.send_signal(signal.SIGTERM)
    assert _exit(proc) == 0


SETSID_HELPER = """
import os, sys, time

if os.fork() == 0:
    os.setsid()  # a session, and so a process group, of its own
    time.sleep(0.5)
    os._exit(0)
sys.exit(0)
"""


def test_the_launcher_waits_for_a_helper_that_left_the_group(tmp_path: Path) -> None:
    """The command's group is empty, but an orphan of it is still running: there is no group to
    signal (not an error), and the launcher waits for that orphan, then exits 0."""
    helper = tmp_path / "helper.py"
    helper.write_text(SETSID_HELPER)
    ran = _run(_launcher(sys.executable, str(helper)), _env(tmp_path, "p"))
    assert (ran.returncode, ran.stderr) == (0, "")
