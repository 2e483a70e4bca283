"""A fourth language: the Go program in examples/go through the real engine, our Go language host
(tools/go-langhost, which builds the program with the `go` on PATH), the SDK generated from the
plugin's schema (sdk/go, reached by the example's `replace` directive) and the native plugin
found through `plugins.providers` in Pulumi.yaml (not on PATH).

Each test's copy of the program sits in a directory laid out as the repository is
(projects/go beside sdk/go, so `../../sdk/go` resolves). The first build of the program compiles
the Pulumi Go SDK (about a minute on 2 cores); Go's build cache makes later ones a few seconds.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from pulumi import automation as auto

from testkit.pulumi_env import REPO, PulumiEnv, provider_config
from testkit.sim import SimulatorProcess
from tests.clusters import FAST_SIMULATOR, live_clusters, preview_error
from tests.native import CLUSTER_TOKEN, PLUGIN_DIR, VOLUME_TOKEN, go_langhost_bin, pin_plugin
from together_provider.cluster.rules import RULEBOOK

EXAMPLE = REPO / "examples" / "go"
SDK = REPO / "sdk" / "go"
pytestmark = pytest.mark.engine


@pytest.fixture
def go_env(tmp_path: Path, engine: Path) -> PulumiEnv:
    """The engine and our Go host on PATH (and `go`); the plugin only through Pulumi.yaml."""
    if shutil.which("go") is None:
        pytest.fail("go is not on PATH: Go programs are built by the go toolchain (docs/go.md)")
    ambient = [p for p in os.environ.get("PATH", "").split(os.pathsep) if p != str(PLUGIN_DIR)]
    path = os.pathsep.join([str(engine), str(go_langhost_bin()), *ambient])
    return PulumiEnv(root=tmp_path, bin_dir=engine, extra_env={"PATH": path})


def _project(env: PulumiEnv) -> Path:
    """A copy of the example, unchanged but for Pulumi.yaml naming the plugin's directory, with
    the SDK where its go.mod's `replace` looks for it."""
    shutil.copytree(SDK, env.root / "sdk" / "go")
    work = env.root / "projects" / "go"
    shutil.copytree(EXAMPLE, work)
    pin_plugin(work)
    return work


def _stack(env: PulumiEnv, sim: SimulatorProcess) -> tuple[Path, auto.Stack]:
    work = _project(env)
    return work, env.stack(work, config=provider_config(sim))


@FAST_SIMULATOR
def test_go_program_previews_ups_changes_the_target_in_place_and_destroys(
    go_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    """One stack through its life (one stack, so the program is built as few times as can be)."""
    work, stack = _stack(go_env, simulator)
    assert stack.preview().change_summary == {auto.OpType.CREATE: 3}
    assert simulator.requests() == []

    outputs = stack.up().outputs
    assert (outputs["status"].value, outputs["standardGpus"].value) == ("Ready", 8)
    assert outputs["preemptibleTarget"].value == 16
    assert outputs["kubeconfig"].secret
    (live,) = live_clusters(simulator)
    assert live.cluster_id == outputs["clusterId"].value
    assert [v.volume_id for v in live.volumes] == [outputs["volumeId"].value]

    # A new preemptible target is one update, in place (no replace): one PUT, the volume alone.
    stack.set_config("numPreemptibleGpus", auto.ConfigValue("24"))
    simulator.reset_requests()
    assert stack.preview().change_summary == {auto.OpType.UPDATE: 1, auto.OpType.SAME: 2}
    changed = stack.up()
    assert changed.summary.resource_changes == {"update": 1, "same": 2}
    writes = [(r["method"], r["status"]) for r in simulator.requests() if r["method"] != "GET"]
    assert writes == [("PUT", 200)]
    assert changed.outputs["clusterId"].value == outputs["clusterId"].value
    assert changed.outputs["preemptibleTarget"].value == 24
    (stored,) = go_env.resource_outputs(work, CLUSTER_TOKEN)
    assert stored["numPreemptibleGpus"] == 24

    assert stack.destroy().summary.resource_changes == {"delete": 3}
    assert live_clusters(simulator) == []
    assert go_env.resource_outputs(work, VOLUME_TOKEN) == []


@FAST_SIMULATOR
def test_go_preview_rejects_a_zero_standard_spec_as_python_does_without_api_calls(
    go_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    _, stack = _stack(go_env, simulator)
    stack.set_config("numGpus", auto.ConfigValue("0"))
    error = preview_error(stack)
    # The message the Python rules give for the example's cluster, word for word.
    spec = {"cluster_name": "notebooks", "region": "us-central-8", "gpu_type": "H100_SXM",
            "num_gpus": 0, "num_preemptible_gpus": 16, "cuda_version": "12.8",
            "nvidia_driver_version": "570", "project_id": "proj-ml-dev"}  # fmt: skip
    (python,) = [f.reason for f in RULEBOOK.validate("notebooks", spec, None)]
    assert python.startswith("cluster 'notebooks': num_gpus=0 leaves no standard node")
    assert python in error
    assert "panic:" not in error and "Traceback" not in error
    assert simulator.requests() == []
