"""The example GitHub workflows parse, and everything of this repository they call exists."""

from __future__ import annotations

import importlib.util
import itertools
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml

from together_provider.preview import MARKER
from together_provider.preview.__main__ import _parser

REPO = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted((REPO / "examples" / "gitops" / "workflows").glob("*.yml"))
IDS = [w.name for w in WORKFLOWS]
_SHELL_OPS = {">", ">>", "||", "&&", "|", "2>"}


def _load(path: Path) -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load(path.read_text())
    return document


def _runs(path: Path) -> list[str]:
    return [
        step["run"]
        for job in _load(path)["jobs"].values()
        for step in job["steps"]
        if "run" in step
    ]


def _triggers(document: dict[Any, Any]) -> dict[str, Any]:
    # YAML 1.1 reads the bare key `on` as True.
    triggers: dict[str, Any] = document["on"] if "on" in document else document[True]
    return triggers


def test_there_is_a_workflow_for_preview_apply_and_drift() -> None:
    triggers = {w.name: set(_triggers(_load(w))) for w in WORKFLOWS}
    assert triggers == {
        "together-apply.yml": {"push", "workflow_dispatch"},
        "together-drift.yml": {"schedule", "workflow_dispatch"},
        "together-preview.yml": {"pull_request"},
    }


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=IDS)
def test_every_job_step_is_a_run_or_a_uses(workflow: Path) -> None:
    for job in _load(workflow)["jobs"].values():
        assert job["runs-on"]
        for step in job["steps"]:
            assert ("run" in step) != ("uses" in step), step


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=IDS)
def test_make_targets_exist(workflow: Path) -> None:
    targets = set(re.findall(r"^([\w-]+):", (REPO / "Makefile").read_text(), re.M))
    called = {t for run in _runs(workflow) for t in re.findall(r"\bmake (\w[\w-]*)", run)}
    assert called
    assert called <= targets


def _preview_calls(workflow: Path) -> list[list[str]]:
    """The argument lists every `python -m together_provider.preview` line passes."""
    calls = []
    for run in _runs(workflow):
        for line in run.replace("\\\n", " ").splitlines():
            if "python -m " not in line:
                continue
            words = shlex.split(line.split("python -m ", 1)[1])
            module, args = (
                words[0],
                list(itertools.takewhile(lambda w: w not in _SHELL_OPS, words[1:])),
            )
            assert importlib.util.find_spec(module), module
            assert module == "together_provider.preview"
            calls.append(args)
    return calls


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=IDS)
def test_the_preview_module_accepts_every_call(workflow: Path) -> None:
    calls = _preview_calls(workflow)
    assert calls
    for args in calls:
        _parser().parse_args(args)  # exits on an unknown flag


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=IDS)
def test_repository_paths_exist(workflow: Path) -> None:
    text = workflow.read_text()
    paths = set(
        re.findall(r"(?<![\w/.~])((?:tools|scripts|together_provider|stacks)/[\w./-]+)", text)
    )
    paths |= {".venv/bin/python"} if ".venv/bin/python" in text else set()
    for path in paths - {".venv/bin/python"}:
        assert list(REPO.glob(path)), path
    triggers = _triggers(_load(workflow))
    for event in ("push", "pull_request"):
        for pattern in (triggers.get(event) or {}).get("paths", []):
            assert list(REPO.glob(pattern)), pattern


def test_preview_comment_marker_matches_the_renderer() -> None:
    text = (REPO / "examples" / "gitops" / "workflows" / "together-preview.yml").read_text()
    assert MARKER.format(stack="${process.env.STACK}") in text
    assert MARKER.format(stack="$STACK") in text


def test_apply_uses_the_saved_plan_with_experimental_on() -> None:
    (job,) = _load(REPO / "examples" / "gitops" / "workflows" / "together-apply.yml")[
        "jobs"
    ].values()
    runs = [s for s in job["steps"] if "run" in s]
    save = next(i for i, s in enumerate(runs) if "--save-plan=plan.json" in s["run"])
    apply = next(i for i, s in enumerate(runs) if "pulumi up" in s["run"])
    assert save < apply
    assert "--plan=plan.json" in runs[apply]["run"]
    assert runs[apply]["env"]["PULUMI_EXPERIMENTAL"] == "true"


def test_drift_check_expects_no_changes() -> None:
    runs = " ".join(_runs(REPO / "examples" / "gitops" / "workflows" / "together-drift.yml"))
    assert "--refresh --expect-no-changes" in runs


def test_readme_lists_the_secrets_the_workflows_use() -> None:
    readme = (REPO / "examples" / "gitops" / "README.md").read_text()
    used = {n for w in WORKFLOWS for n in re.findall(r"(?:secrets|vars)\.(\w+)", w.read_text())}
    assert used == {"PULUMI_BACKEND_URL", "PULUMI_CONFIG_PASSPHRASE", "TOGETHER_API_KEY"}
    assert all(f"`{name}`" in readme for name in used)
