"""The local stand-ins act runs instead of GitHub's actions (tests/gitops/actions): each does what
its action.yml says, run as act runs it (bash, with GITHUB_OUTPUT and GITHUB_PATH files), and
every action the example workflows use has one."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from testkit.act import STANDINS, standins

REPO = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted((REPO / "examples" / "gitops" / "workflows").glob("*.yml"))


def run_standin(
    tmp_path: Path, action: str, **env: str
) -> tuple[subprocess.CompletedProcess[str], dict[str, str], list[str]]:
    """Run a stand-in's script; return the result, its outputs and the PATH entries it added."""
    outputs, path = tmp_path / "output", tmp_path / "path"
    outputs.touch()
    path.touch()
    (script,) = (STANDINS / action).glob("*.sh")
    done = subprocess.run(
        ["bash", str(script)],
        env={**os.environ, "GITHUB_OUTPUT": str(outputs), "GITHUB_PATH": str(path), **env},
        capture_output=True,
        text=True,
    )
    values = dict(line.split("=", 1) for line in outputs.read_text().splitlines())
    return done, values, path.read_text().splitlines()


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=[w.name for w in WORKFLOWS])
def test_every_action_a_workflow_uses_has_a_stand_in(workflow: Path) -> None:
    mapped = standins(workflow)
    assert {m.split("@")[0] for m in mapped} >= {"actions/checkout", "actions/setup-python"}


def test_a_workflow_using_an_action_without_a_stand_in_is_refused(tmp_path: Path) -> None:
    workflow = tmp_path / "w.yml"
    workflow.write_text("jobs:\n  a:\n    steps:\n      - uses: actions/github-script@v7\n")
    with pytest.raises(RuntimeError, match=r"actions/github-script@v7: add .*github-script"):
        standins(workflow)


def test_setup_python_uses_the_host_python_when_it_is_new_enough(tmp_path: Path) -> None:
    done, outputs, path = run_standin(tmp_path, "setup-python", WANT="3.11")
    assert done.returncode == 0, done.stderr
    python = shutil.which("python3")
    assert python is not None
    version = subprocess.run(
        [python, "-c", "import platform; print(platform.python_version())"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert outputs == {"python-version": version, "python-path": os.path.realpath(python)}
    assert path == [str(Path(os.path.realpath(python)).parent)]


def test_setup_python_fails_when_the_host_python_is_older(tmp_path: Path) -> None:
    done, outputs, path = run_standin(tmp_path, "setup-python", WANT="3.99")
    assert done.returncode == 1
    assert "the workflow asks for 3.99" in done.stdout
    assert outputs == {} and path == []


def test_cache_reports_a_hit_only_when_every_path_is_on_the_host(tmp_path: Path) -> None:
    there = tmp_path / "there"
    there.mkdir()
    done, outputs, _ = run_standin(tmp_path, "cache", CACHE_PATHS=f"{there}\n", CACHE_KEY="k")
    assert done.returncode == 0 and outputs == {"cache-hit": "true"}
    paths = f"{there}\n{tmp_path / 'missing'}"
    done, outputs, _ = run_standin(tmp_path, "cache", CACHE_PATHS=paths, CACHE_KEY="k")
    assert done.returncode == 0 and outputs == {"cache-hit": "false"}


def test_checkout_copies_the_tree_over_the_workspace(tmp_path: Path) -> None:
    tree, workspace = tmp_path / "tree", tmp_path / "workspace"
    (tree / "stacks").mkdir(parents=True)
    (tree / "Pulumi.yaml").write_text("name: x\n")
    (tree / "stacks" / "Pulumi.dev.yaml").write_text("config: {}\n")
    workspace.mkdir()
    (workspace / "stacks").mkdir()
    (workspace / "stacks" / "Pulumi.dev.yaml").write_text("changed by the last job\n")
    env = {"GITHUB_WORKSPACE": str(workspace), "TOGETHER_ACT_CHECKOUT": str(tree)}
    done, _, _ = run_standin(tmp_path, "checkout", **env)
    assert done.returncode == 0, done.stderr
    assert (workspace / "Pulumi.yaml").read_text() == "name: x\n"
    assert (workspace / "stacks" / "Pulumi.dev.yaml").read_text() == "config: {}\n"


def test_checkout_refuses_a_directory_that_is_not_the_repository(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    env = {"GITHUB_WORKSPACE": str(workspace), "TOGETHER_ACT_CHECKOUT": str(tmp_path)}
    done, _, _ = run_standin(tmp_path, "checkout", **env)
    assert done.returncode == 1
    assert "holds no Pulumi.yaml: point it at a tree of the repository" in done.stdout
    assert list(workspace.iterdir()) == []


def test_checkout_without_a_tree_to_copy_says_what_to_set(tmp_path: Path) -> None:
    env = {"GITHUB_WORKSPACE": str(tmp_path), "TOGETHER_ACT_CHECKOUT": ""}
    done, _, _ = run_standin(tmp_path, "checkout", **env)
    assert done.returncode == 1
    assert "TOGETHER_ACT_CHECKOUT is not set: set it to a tree of the repository" in done.stdout


def test_upload_artifact_keeps_the_files_and_gives_the_runs_artifact_url(tmp_path: Path) -> None:
    store, report = tmp_path / "artifacts", tmp_path / "drill.json"
    report.write_text("{}")
    env = {
        "TOGETHER_ACT_ARTIFACTS": str(store),
        "ARTIFACT_NAME": "drill-report",
        "ARTIFACT_PATHS": f"{report}\n",
        "GITHUB_SERVER_URL": "https://github.example",
        "GITHUB_REPOSITORY": "acme/gpu",
        "GITHUB_RUN_ID": "7",
    }
    done, outputs, _ = run_standin(tmp_path, "upload-artifact", **env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (store / "drill-report" / "drill.json").read_text() == "{}"
    assert outputs == {
        "artifact-id": "1",
        "artifact-url": "https://github.example/acme/gpu/actions/runs/7/artifacts/1",
    }
    done, _, _ = run_standin(tmp_path, "upload-artifact", **{**env, "ARTIFACT_PATHS": "nope"})
    assert done.returncode == 1 and "no file at nope" in done.stdout
    done, _, _ = run_standin(tmp_path, "upload-artifact", **{**env, "TOGETHER_ACT_ARTIFACTS": ""})
    assert done.returncode == 1 and "TOGETHER_ACT_ARTIFACTS is not set" in done.stdout
