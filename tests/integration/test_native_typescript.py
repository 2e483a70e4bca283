"""A third language: the TypeScript program in examples/typescript through the real engine, our
Node.js language host (tools/nodejs-langhost), the SDK generated from the plugin's schema
(sdk/typescript, installed from the repository by npm) and the native plugin found through
`plugins.providers` in Pulumi.yaml (not on PATH).

npm installs the example once per session, into a session directory laid out as the repository
is (examples/typescript beside sdk/typescript, so `file:../../sdk/typescript` resolves); each
test's copy of the program links that node_modules.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from pulumi import automation as auto

from testkit.pulumi_env import REPO, PulumiEnv, provider_config
from testkit.sim import SimulatorProcess
from tests.clusters import FAST_SIMULATOR, live_clusters, preview_error
from tests.example_programs import (
    lives_through_up_target_change_refresh_and_destroy,
    refuses_zero_standard_as_python_does,
)
from tests.native import (
    PLUGIN_DIR,
    import_legacy,
    legacy_cluster,
    nodejs_langhost_bin,
    pin_plugin,
)

EXAMPLE = REPO / "examples" / "typescript"
SDK = REPO / "sdk" / "typescript"
pytestmark = pytest.mark.engine


@pytest.fixture(scope="session")
def npm_install(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """examples/typescript with its npm dependencies installed (once per session), and what
    `npm install` printed. It runs as a newcomer runs it: in the example's directory (cwd and
    $PWD, as a shell's `cd` sets them), with the example's own .npmrc."""
    npm = shutil.which("npm")
    if npm is None:
        pytest.fail("npm is not on PATH: install Node.js 20 (with npm) to run TypeScript programs")
    root = tmp_path_factory.mktemp("typescript")
    shutil.copytree(
        SDK, root / "sdk" / "typescript", ignore=shutil.ignore_patterns("node_modules", "bin")
    )
    example = root / "examples" / "typescript"
    shutil.copytree(EXAMPLE, example, ignore=shutil.ignore_patterns("node_modules", "bin"))
    done = subprocess.run(
        [npm, "install", "--no-audit", "--no-fund"],
        cwd=example,
        env={**os.environ, "PWD": str(example)},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, f"npm install failed:\n{done.stdout}\n{done.stderr}"
    return example, done.stdout + done.stderr


@pytest.fixture(scope="session")
def installed_example(npm_install: tuple[Path, str]) -> Path:
    return npm_install[0]


def test_a_first_npm_install_runs_the_install_scripts_without_a_warning(
    npm_install: tuple[Path, str],
) -> None:
    """The example's .npmrc declares the two install scripts it runs (the SDK's, which compiles
    it, and protobufjs's), so npm 11 does not warn that they are "not yet covered by
    allowScripts" (and npm 12, which blocks such scripts, still runs them); the SDK's .npmignore
    keeps npm from warning that it falls back to .gitignore when it copies the SDK."""
    example, output = npm_install
    assert "allowScripts" not in output, output
    assert "npm warn" not in output, output
    assert (example / "node_modules/@together-gpu-clusters/together/bin/index.js").is_file()


@pytest.fixture
def ts_env(tmp_path: Path, engine: Path) -> PulumiEnv:
    """The engine and our Node.js host on PATH; the plugin only through Pulumi.yaml."""
    ambient = [p for p in os.environ.get("PATH", "").split(os.pathsep) if p != str(PLUGIN_DIR)]
    path = os.pathsep.join([str(engine), str(nodejs_langhost_bin()), *ambient])
    return PulumiEnv(root=tmp_path, bin_dir=engine, extra_env={"PATH": path})


def _project(env: PulumiEnv, installed: Path, program: str | None = None) -> Path:
    """A copy of the example (its index.ts replaced by `program` if given) whose Pulumi.yaml
    names the plugin's directory, sharing the session's node_modules."""
    work = env.root / "projects" / "typescript"
    shutil.copytree(installed, work, ignore=shutil.ignore_patterns("node_modules"))
    (work / "node_modules").symlink_to(installed / "node_modules", target_is_directory=True)
    if program is not None:
        (work / "index.ts").write_text(program)
    pin_plugin(work)
    return work


def _stack(env: PulumiEnv, sim: SimulatorProcess, work: Path) -> auto.Stack:
    return env.stack(work, config=provider_config(sim))


@FAST_SIMULATOR
def test_typescript_program_up_target_change_refresh_and_destroy(
    ts_env: PulumiEnv, simulator: SimulatorProcess, installed_example: Path
) -> None:
    work = _project(ts_env, installed_example)
    stack = _stack(ts_env, simulator, work)
    lives_through_up_target_change_refresh_and_destroy(ts_env, simulator, work, stack)


@FAST_SIMULATOR
def test_typescript_preview_rejects_a_zero_standard_spec_without_api_calls(
    ts_env: PulumiEnv, simulator: SimulatorProcess, installed_example: Path
) -> None:
    stack = _stack(ts_env, simulator, _project(ts_env, installed_example))
    refuses_zero_standard_as_python_does(stack, simulator)


@FAST_SIMULATOR
def test_typescript_import_writes_a_program_that_previews_no_changes(
    ts_env: PulumiEnv, simulator: SimulatorProcess, installed_example: Path
) -> None:
    existing_id = legacy_cluster(simulator)
    # An empty program: the stack holds nothing until the import.
    work = _project(ts_env, installed_example, program="export {};\n")
    stack = _stack(ts_env, simulator, work)
    code = import_legacy(ts_env, work, existing_id, ts_env.root / "legacy.ts")
    assert 'import * as together from "@together-gpu-clusters/together";' in code
    assert 'new together.Cluster("legacy"' in code
    assert "numGpus: 8," in code
    (work / "index.ts").write_text(code)
    assert stack.preview().change_summary == {auto.OpType.SAME: 2}
    assert [c.cluster_id for c in live_clusters(simulator)] == [existing_id]


@FAST_SIMULATOR
def test_a_program_without_its_npm_install_says_to_run_it(
    ts_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    work = ts_env.root / "projects" / "typescript"
    shutil.copytree(EXAMPLE, work, ignore=shutil.ignore_patterns("node_modules", "bin"))
    error = preview_error(_stack(ts_env, simulator, work))
    assert "Have you run pulumi install (or npm install)?" in error
    assert simulator.requests() == []
