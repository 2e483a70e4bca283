"""`make demo BACKEND=postgres`: the demo with its Pulumi state in a local PostgreSQL server,
started by the demo and removed by `demo down` (scripts/demo.sh with DEMO_BACKEND=postgres)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from testkit.pulumi_env import REPO
from tests.kube_helpers import demo_bins_env, free_port

pytestmark = pytest.mark.engine


def demo_copy(work: Path) -> Path:
    work.mkdir()
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(REPO / name, work / name)
    for name in ("stacks", "scripts"):
        shutil.copytree(REPO / name, work / name)
    (work / ".venv").symlink_to(Path(sys.prefix))
    return work


def run(work: Path, command: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        ["bash", "-c", command],
        cwd=work,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, f"{command!r} failed:\n{done.stdout}\n{done.stderr}"
    return done


def test_demo_keeps_its_state_in_postgres_and_down_removes_the_server(
    tmp_path: Path, engine: Path
) -> None:
    work = demo_copy(tmp_path / "project")
    env = {
        "TOGETHER_ENGINE_BIN": str(engine),
        "DEMO_SIM_PORT": str(free_port()),
        "REAL_NODES": "0",  # the backend is what this shows: KWOK nodes and the host autoscaler
        **demo_bins_env(),  # the demo's simulator runs --kubernetes; pulumi finds the plugin
    }
    try:
        up = run(work, "DEMO_BACKEND=postgres bash scripts/demo.sh up", env)
        assert "PostgreSQL backend" in up.stdout
        assert "+ 3 created" in up.stdout

        # The walkthrough's shell sees the same state: in the database, not in .demo/state.
        listed = run(work, "source .demo/env && echo $PULUMI_BACKEND_URL && pulumi stack ls", env)
        assert listed.stdout.startswith("postgres://pulumi:")
        assert "dev" in listed.stdout
        assert not any((work / ".demo" / "state").iterdir())

        again = run(work, "bash scripts/demo.sh up", env)  # remembers the backend
        assert "3 unchanged" in again.stdout
    finally:
        down = run(work, "bash scripts/demo.sh down", env)
    assert "destroy" in down.stdout
    assert not (work / ".demo" / "postgres" / "postgres.env").exists()
