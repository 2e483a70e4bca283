"""Shared steps of the reliability tests: the raw CLI in its own session, killing it, polling."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

from testkit.pulumi_env import PulumiEnv

API_KEY = "sk-reliability-9d41c27e"


def start_cli(env: PulumiEnv, work: Path, *args: str) -> subprocess.Popen[str]:
    """The raw `pulumi` CLI in its own process group (so the whole tree can be killed)."""
    return subprocess.Popen(
        [str(env.bin_dir / "pulumi"), *args, "--non-interactive"],
        cwd=work,
        env={**os.environ, **env.env_vars},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def wait_for(condition: Any, *, timeout: float, what: str, interval: float = 0.05) -> None:
    """Bounded polling of something a subprocess does; fails with `what` after `timeout`."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)


def session_pids(proc: subprocess.Popen[str]) -> list[int]:
    """Every live process in the CLI's session: the CLI and all it started.

    The engine starts the language host and each provider plugin in a process group of its own
    (so killing the CLI's group leaves them running), but they stay in the CLI's session.
    """
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.getsid(int(entry.name)) == proc.pid:
                    pids.append(int(entry.name))
            except (ProcessLookupError, PermissionError):
                continue
    return pids


def kill_group(proc: subprocess.Popen[str]) -> str:
    """SIGKILL the CLI's process group only (the language host and provider survive, orphaned);
    return the CLI's output."""
    os.killpg(proc.pid, signal.SIGKILL)
    out, _ = proc.communicate(timeout=30)
    return out or ""


def kill_session(proc: subprocess.Popen[str]) -> str:
    """SIGKILL everything the CLI started, as when its machine or container dies."""
    for pid in session_pids(proc):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            continue
    out, _ = proc.communicate(timeout=30)
    return out or ""
