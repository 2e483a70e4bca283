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
import yaml
from pulumi import automation as auto

from testkit.pulumi_env import REPO, PulumiEnv, provider_config
from testkit.sim import SimulatorProcess
from tests.clusters import FAST_SIMULATOR, preview_error
from tests.example_programs import (
    lives_through_up_target_change_refresh_and_destroy,
    refuses_zero_standard_as_python_does,
)
from tests.native import PLUGIN_DIR, go_langhost_bin, pin_plugin

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
def test_go_program_previews_ups_changes_the_target_in_place_refreshes_and_destroys(
    go_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    work, stack = _stack(go_env, simulator)
    lives_through_up_target_change_refresh_and_destroy(go_env, simulator, work, stack)


@FAST_SIMULATOR
def test_go_preview_rejects_a_zero_standard_spec_as_python_does_without_api_calls(
    go_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    refuses_zero_standard_as_python_does(_stack(go_env, simulator)[1], simulator)


@FAST_SIMULATOR
def test_go_runtime_options_keep_the_built_program_and_run_a_prebuilt_one(
    go_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    """Upstream's two options: `buildTarget` keeps the binary the host builds, `binary` runs one
    built beforehand (no `go build`), and both at once is an error naming them."""
    work, stack = _stack(go_env, simulator)
    settings = yaml.safe_load((work / "Pulumi.yaml").read_text())

    def runtime(**options: str) -> None:
        settings["runtime"] = {"name": "go", "options": options}
        (work / "Pulumi.yaml").write_text(yaml.safe_dump(settings, sort_keys=False))

    runtime(buildTarget="bin/program")
    assert stack.preview().change_summary == {auto.OpType.CREATE: 3}
    built = work / "bin" / "program"
    assert os.access(built, os.X_OK)

    (work / "main.go").write_text("package main\n\nfunc main() { undefined() }\n")  # no build
    runtime(binary=str(built))
    assert stack.preview().change_summary == {auto.OpType.CREATE: 3}

    runtime(binary=str(built), buildTarget="bin/program")
    error = preview_error(stack)
    assert "binary and buildTarget cannot both be set" in error
    assert simulator.requests() == []
