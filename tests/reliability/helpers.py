"""Shared steps of the reliability tests: stacks of the cluster programs, raw CLI runs, and what
the simulator holds (the ground truth every test compares the Pulumi state against)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

from pulumi import automation as auto

from tests.integration.conftest import PROGRAMS
from tests.pulumi_env import PulumiEnv, Secret
from tests.sim import SimulatorProcess
from together_provider.client import TogetherClient
from together_provider.wire import Cluster

API_KEY = "sk-reliability-9d41c27e"
CLUSTER_TYPE = "pulumi-python:dynamic/together:Cluster"


def cluster_stack(
    env: PulumiEnv,
    sim: SimulatorProcess,
    clusters: dict[str, dict[str, Any]],
    *,
    program: str = "cluster",
    stack_name: str = "test",
    api_key: str | None = None,
) -> tuple[auto.Stack, Path]:
    """A stack of `program` declaring `clusters` (name -> args), and its work dir."""
    work = env.root / "projects" / program
    if not work.exists():
        work = env.project(PROGRAMS / program)
    stack = env.stack(
        work,
        stack_name,
        config={
            "clusters": json.dumps(clusters),
            "together:apiKey": Secret(api_key or sim.api_key),
            "together:baseUrl": sim.base_url,
        },
    )
    return stack, work


def set_clusters(stack: auto.Stack, clusters: dict[str, dict[str, Any]]) -> None:
    stack.set_config("clusters", auto.ConfigValue(json.dumps(clusters)))


def live_clusters(sim: SimulatorProcess) -> list[Cluster]:
    """Every cluster the simulator holds that is not on its way out."""
    with TogetherClient(api_key=sim.api_key, base_url=sim.base_url) as client:
        return [c for c in client.list_clusters() if not c.is_deleting]


def all_clusters(sim: SimulatorProcess) -> list[Cluster]:
    with TogetherClient(api_key=sim.api_key, base_url=sim.base_url) as client:
        return client.list_clusters()


def state_clusters(env: PulumiEnv, work: Path, stack_name: str = "test") -> dict[str, str]:
    """Cluster resources in the stored state: resource name -> cluster id."""
    resources = env.exported_state(work, stack_name)["deployment"].get("resources") or []
    return {r["urn"].rsplit("::", 1)[1]: r["id"] for r in resources if r["type"] == CLUSTER_TYPE}


def pending_operations(env: PulumiEnv, work: Path, stack_name: str = "test") -> list[Any]:
    deployment = env.exported_state(work, stack_name)["deployment"]
    return list(deployment.get("pending_operations") or [])


def successful_posts(sim: SimulatorProcess) -> int:
    return sum(1 for r in sim.requests() if r["method"] == "POST" and r["status"] == 200)


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
