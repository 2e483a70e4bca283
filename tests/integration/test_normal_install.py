"""A fresh clone, set up the way Pulumi's docs say and nothing else: `pulumi install` (Pulumi's
pip toolchain: a virtualenv at Pulumi.yaml's `virtualenv`, then `pip install -r
requirements.txt`), then `pulumi up` of the dev stack. No `make`, no virtualenv of ours.

This downloads nothing new when pip's cache is warm, but it does build a virtualenv: the slowest
engine test (about a minute on 2 cores).
"""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from testkit.pulumi_env import PulumiEnv, fresh_clone
from testkit.sim import SimulatorProcess
from tests.clusters import live_clusters

API_KEY = "sk-fresh-clone-77a1"
pytestmark = [
    pytest.mark.engine,
    pytest.mark.parametrize("simulator", [{"time_scale": 600, "api_key": API_KEY}], indirect=True),
]


def test_pulumi_install_then_up_on_a_fresh_clone(
    tmp_path: Path, engine: Path, simulator: SimulatorProcess
) -> None:
    clone = fresh_clone(tmp_path / "clone")
    assert not (clone / ".venv").exists()
    # stacks/Pulumi.dev.yaml's salt belongs to the demo's passphrase.
    env = PulumiEnv.for_user(
        tmp_path, engine, base_url=simulator.base_url, api_key=API_KEY, passphrase="demo-passphrase"
    )
    pulumi = functools.partial(env.succeed, clone)

    installed = pulumi("install")
    assert (clone / ".venv" / "bin" / "python").exists()
    # Quiet: setuptools' import-hook editable install warns of "folders in your working
    # directory"; pyproject.toml's package-dir makes it a plain .pth line instead.
    assert "Please be careful with folders" not in installed
    pulumi("stack", "select", "dev", "--create")
    pulumi("up", "--yes", "--skip-preview")
    assert [c.cluster_name for c in live_clusters(simulator)] == ["train"]
    pulumi("destroy", "--yes", "--skip-preview")
    assert live_clusters(simulator) == []
