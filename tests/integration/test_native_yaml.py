"""A second language: the Pulumi YAML program in examples/yaml through the real engine, the YAML
language host built from its Go module, and the native plugin found through `plugins.providers`
in Pulumi.yaml (nothing of ours on PATH)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from pulumi import automation as auto

from testkit.pulumi_env import REPO, PulumiEnv, provider_config
from testkit.sim import SimulatorProcess
from tests.clusters import FAST_SIMULATOR, live_clusters, preview_error
from tests.native import (
    PLUGIN_DIR,
    import_legacy,
    legacy_cluster,
    pin_plugin,
    yaml_langhost_bin,
)

EXAMPLE = REPO / "examples" / "yaml"
pytestmark = [pytest.mark.engine, FAST_SIMULATOR]


@pytest.fixture
def yaml_env(tmp_path: Path, engine: Path) -> PulumiEnv:
    """The engine and the YAML host on PATH; the plugin only through Pulumi.yaml."""
    ambient = [p for p in os.environ.get("PATH", "").split(os.pathsep) if p != str(PLUGIN_DIR)]
    path = os.pathsep.join([str(engine), str(yaml_langhost_bin()), *ambient])
    return PulumiEnv(root=tmp_path, bin_dir=engine, extra_env={"PATH": path})


def _project(env: PulumiEnv, program: dict[str, Any] | None = None) -> Path:
    """A copy of examples/yaml (or `program`) whose Pulumi.yaml names the plugin's directory."""
    work = env.root / "projects" / "yaml"
    shutil.copytree(EXAMPLE, work)
    pin_plugin(work, program)
    return work


def _stack(env: PulumiEnv, sim: SimulatorProcess, work: Path) -> auto.Stack:
    return env.stack(work, config=provider_config(sim))


def test_yaml_program_declares_a_cluster_then_changes_its_target_in_place(
    yaml_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    stack = _stack(yaml_env, simulator, _project(yaml_env))
    outputs = stack.up().outputs
    assert (outputs["status"].value, outputs["preemptibleTarget"].value) == ("Ready", 16)
    stack.set_config("numPreemptibleGpus", auto.ConfigValue("24"))
    simulator.reset_requests()
    assert stack.preview().change_summary == {auto.OpType.UPDATE: 1, auto.OpType.SAME: 1}
    result = stack.up()
    assert [(r["method"], r["status"]) for r in simulator.requests()] == [("PUT", 200)]
    assert result.outputs["clusterId"].value == outputs["clusterId"].value
    assert result.outputs["preemptibleTarget"].value == 24


def test_yaml_preview_rejects_a_zero_standard_spec_without_api_calls(
    yaml_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    stack = _stack(yaml_env, simulator, _project(yaml_env))
    stack.set_config("numGpus", auto.ConfigValue("0"))
    error = preview_error(stack)
    assert "num_gpus=0 leaves no standard node" in error
    assert "Traceback" not in error
    assert simulator.requests() == []


def test_yaml_import_writes_a_program_that_previews_no_changes(
    yaml_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    existing_id = legacy_cluster(simulator)
    work = _project(yaml_env, {"name": "together-yaml", "runtime": "yaml"})
    stack = _stack(yaml_env, simulator, work)
    code = yaml.safe_load(import_legacy(yaml_env, work, existing_id, yaml_env.root / "legacy.yaml"))
    assert code["resources"]["legacy"]["properties"]["numGpus"] == 8
    settings = yaml.safe_load((work / "Pulumi.yaml").read_text())
    (work / "Pulumi.yaml").write_text(yaml.safe_dump({**settings, **code}, sort_keys=False))
    assert stack.preview().change_summary == {auto.OpType.SAME: 2}
    assert [c.cluster_id for c in live_clusters(simulator)] == [existing_id]
