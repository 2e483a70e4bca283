"""Shared steps of the reliability tests: the raw CLI in its own session, killing it, polling."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest
from pulumi import automation as auto

from testkit.pulumi_env import PulumiEnv
from testkit.sim import SimulatorProcess
from testkit.wait import wait_for
from tests.clusters import cluster_stack, successful_posts
from tests.specs import CLUSTER_SPEC

API_KEY = "sk-reliability-9d41c27e"


def on_engine(time_scale: float, *extra_args: str) -> list[pytest.MarkDecorator]:
    """A reliability module's `pytestmark`: its tests drive the real engine against a simulator
    that runs `time_scale` simulated seconds a second, knows only `API_KEY`, and gets
    `extra_args` on its command line."""
    simulator = {"time_scale": time_scale, "api_key": API_KEY, "extra_args": extra_args}
    return [pytest.mark.engine, pytest.mark.parametrize("simulator", [simulator], indirect=True)]


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


UP = ("up", "--yes", "--skip-preview", "--stack")
"""The raw CLI's `up` of a stack (its name follows), as a user runs it in CI."""


def up_past_create(
    env: PulumiEnv, sim: SimulatorProcess
) -> tuple[auto.Stack, Path, subprocess.Popen[str]]:
    """A stack of one cluster, `train` (`CLUSTER_SPEC`), its work dir and its raw `up` running in
    the background: returned once Together has accepted the create's POST, while the cluster
    provisions and the engine polls it."""
    stack, work = cluster_stack(env, sim, {"train": dict(CLUSTER_SPEC)})
    up = start_cli(env, work, *UP, "test")
    wait_for(lambda: successful_posts(sim) == 1, timeout=60, what="the create's POST")
    return stack, work, up


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
