"""A PID 1 that passes the reclaim on: `python -m together_worker run -- CMD...` forwards SIGTERM
to the command's process group, reaps what it leaves, and never reports a reclaimed run as 0."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from typing import Final

FORWARDED: Final = (signal.SIGTERM, signal.SIGINT)
WAITED: Final = {*FORWARDED, signal.SIGCHLD, signal.SIGALRM}
_ENDED_ON_ITS_OWN: Final = 0
"""Stands for "no reclaim signal": the command ended before any was forwarded."""
PR_SET_CHILD_SUBREAPER: Final = 36
"""Linux prctl: orphans of the command (a shell's children) are reparented to this process, so it
can wait for them even when it is not PID 1."""
LEFTOVER_GRACE_SECONDS: Final = 10
"""After the command exits on its own, how long what it left in its group gets after SIGTERM."""


def exit_code(status: int, forwarded: int | None) -> int:
    """The launcher's exit code for the command's wait ``status``.

    A command stopped by a signal reports 128 + the signal (143 for SIGTERM), as a shell does. A
    command that exits 0 after a reclaim signal was forwarded also reports 128 + that signal: it
    was cut short (a shell wrapper that swallowed its child's 143, a handler that exits 0), and a
    0 would make the Job count the index as done; a run that had in fact just finished resumes
    from its last checkpoint and ends at once.
    """
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    code = os.WEXITSTATUS(status)
    if code == 0 and forwarded is not None:
        return 128 + forwarded
    return code


def become_subreaper() -> bool:
    """Ask Linux to reparent the command's orphans to this process (False where it cannot)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def run(command: Sequence[str]) -> int:
    """Run ``command`` in a process group of its own and return the exit code to exit with.

    A reclaim signal goes to the whole group: the real worker under a ``sh -c`` wrapper gets it
    too (so do data-loader helpers: see ``helper_ignores_reclaim``). The launcher then waits for
    every process of the group, not only the command, so a checkpoint still being written by a
    shell's child is not cut off by PID 1 exiting. It adds no hard kill of its own: the kubelet
    kills at the end of the grace period.

    Signals are blocked and taken with ``sigwait``, as an init does: one that arrives at any
    moment (even between starting the command and waiting for it) stays pending until taken,
    where a Python handler could run too late to interrupt the wait.
    """
    signal.pthread_sigmask(signal.SIG_BLOCK, WAITED)
    become_subreaper()
    try:
        child = subprocess.Popen(
            list(command),
            start_new_session=True,
            preexec_fn=lambda: signal.pthread_sigmask(signal.SIG_UNBLOCK, WAITED),
        )
    except OSError as error:
        print(f"together_worker run: cannot start {command[0]!r}: {error}", file=sys.stderr)
        return 127 if isinstance(error, FileNotFoundError) else 126
    group = child.pid
    forwarded: int | None = None
    status: int | None = None
    while True:
        status, left = _reap(group, status)
        if status is not None and not left:
            break
        if status is not None and forwarded is None:
            # The command ended on its own: what it left in its group is stopped, boundedly.
            forwarded = _ENDED_ON_ITS_OWN
            _signal_group(group, signal.SIGTERM)
            signal.alarm(LEFTOVER_GRACE_SECONDS)
        signum = signal.sigwait(WAITED)
        if signum == signal.SIGALRM:
            _signal_group(group, signal.SIGKILL)
        elif signum in FORWARDED:
            if forwarded is None:
                forwarded = signum
            _signal_group(group, signum)
    signal.alarm(0)
    assert status is not None
    return exit_code(status, None if forwarded == _ENDED_ON_ITS_OWN else forwarded)


def _reap(pid: int, status: int | None) -> tuple[int | None, bool]:
    """Reap every child that has ended (orphans of the group too): ``pid``'s status once it has
    ended, and whether any child is left."""
    while True:
        try:
            reaped, wait_status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return status, False
        if reaped == 0:
            return status, True
        if reaped == pid:
            status = wait_status


def _signal_group(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):  # the group is gone already
        os.killpg(pgid, signum)
