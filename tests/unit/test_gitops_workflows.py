"""The example GitHub workflows parse, and everything of this repository they call exists."""

from __future__ import annotations

import importlib.util
import itertools
import re
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from together_drill.ci import _parser as drill_ci_parser
from together_provider.preview.__main__ import _parser
from together_provider.preview.commands import GITHUB_ERROR_EXIT, _drift_parser
from together_provider.preview.plan import BAD_INPUT_EXIT, Outcome

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


def test_there_is_a_workflow_for_preview_apply_drift_and_drill() -> None:
    triggers = {w.name: set(_triggers(_load(w))) for w in WORKFLOWS}
    assert triggers == {
        "together-apply.yml": {"push", "workflow_dispatch"},
        "together-drift.yml": {"schedule", "workflow_dispatch"},
        "together-drill.yml": {"pull_request"},
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


def _preview_calls(
    workflow: Path, module_name: str = "together_provider.preview"
) -> list[list[str]]:
    """The argument lists every `python -m <module_name>` line passes (every `python -m` line
    runs either the preview or the drill's CI entry point)."""
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
            assert module in ("together_provider.preview", "together_drill.ci"), module
            if module == module_name:
                calls.append(args)
    return calls


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=IDS)
def test_the_preview_module_accepts_every_call(workflow: Path) -> None:
    calls = _preview_calls(workflow)
    assert calls
    for call in calls:  # exits on an unknown flag; a lone shell variable stands for a number
        args = ["1" if re.fullmatch(r"\$\w+", arg) else arg for arg in call]
        if args[:1] == ["drift-issue"]:
            _drift_parser().parse_args(args[1:])
        else:
            _parser().parse_args(args)


USERS_PATHS = {"rendered/**"}
"""Path filters that name the user's own files, not this repository's: the drill workflow's
Job manifests (the directory the program's renderYamlTo writes, committed)."""


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
            if pattern in USERS_PATHS:
                continue
            assert list(REPO.glob(pattern)), pattern


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=IDS)
def test_no_step_runs_a_script_from_outside_the_repository(workflow: Path) -> None:
    used = {
        step["uses"].split("@")[0]
        for job in _load(workflow)["jobs"].values()
        for step in job["steps"]
        if "uses" in step
    }
    assert used <= {
        "actions/checkout",
        "actions/setup-python",
        "actions/setup-go",
        "actions/cache",
        "actions/upload-artifact",
    }


@pytest.mark.parametrize(
    ("name", "call", "permission"),
    [
        ("together-preview.yml", "--github-pr", "pull-requests"),
        ("together-drift.yml", "drift-issue", "issues"),
        ("together-drill.yml", "--github-pr", "pull-requests"),
    ],
)
def test_github_is_called_by_the_poster_with_the_jobs_token(
    name: str, call: str, permission: str
) -> None:
    document = _load(REPO / "examples" / "gitops" / "workflows" / name)
    steps = [
        step
        for job in document["jobs"].values()
        for step in job["steps"]
        if call in step.get("run", "")
    ]
    assert len(steps) == 1
    assert steps[0]["env"]["GITHUB_TOKEN"] == "${{ github.token }}"
    assert document["permissions"][permission] == "write"


def test_the_gate_handles_every_exit_code_of_the_poster() -> None:
    (job,) = _load(REPO / "examples" / "gitops" / "workflows" / "together-preview.yml")[
        "jobs"
    ].values()
    (gate,) = [s for s in job["steps"] if s.get("name") == "Gate on the preview"]
    handled = {int(code) for code in re.findall(r"^\s*(\d+)\)", gate["run"], re.M)}
    assert handled == {*(o.value for o in Outcome), GITHUB_ERROR_EXIT}
    assert BAD_INPUT_EXIT not in handled  # the catch-all: the preview could not be read


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


def test_the_pr_preview_refreshes_so_its_live_figures_are_current() -> None:
    """Without --refresh the comment's allocated GPUs are the stored state's, hours old."""
    runs = " ".join(_runs(REPO / "examples" / "gitops" / "workflows" / "together-preview.yml"))
    assert "pulumi preview --refresh --json" in runs


def test_drift_check_expects_no_changes() -> None:
    runs = " ".join(_runs(REPO / "examples" / "gitops" / "workflows" / "together-drift.yml"))
    assert "--refresh --expect-no-changes" in runs


def test_readme_lists_the_secrets_the_workflows_use() -> None:
    readme = (REPO / "examples" / "gitops" / "README.md").read_text()
    used = {n for w in WORKFLOWS for n in re.findall(r"(?:secrets|vars)\.(\w+)", w.read_text())}
    assert used == {
        "PULUMI_BACKEND_URL",
        "PULUMI_CONFIG_PASSPHRASE",
        "TOGETHER_API_KEY",
        "TOGETHER_DRILL_KUBECONFIG",
    }
    assert all(f"`{name}`" in readme for name in used)


def test_the_drill_workflow_calls_its_entry_point_as_it_parses() -> None:
    workflow = REPO / "examples" / "gitops" / "workflows" / "together-drill.yml"
    calls = _preview_calls(workflow, "together_drill.ci")
    assert [call[0] for call in calls] == ["choose", "run"]
    for call in calls:
        drill_ci_parser().parse_args(call)
    assert "--drill" in _preview_calls(workflow)[0]


def test_the_drill_gate_handles_every_exit_code_of_the_drill() -> None:
    (job,) = _load(REPO / "examples" / "gitops" / "workflows" / "together-drill.yml")[
        "jobs"
    ].values()
    (gate,) = [s for s in job["steps"] if s.get("name") == "Gate on the drill"]
    handled = {int(code) for code in re.findall(r"^\s*(\d+)\)", gate["run"], re.M)}
    assert handled == {0, 1, 3}  # 2, could not drill, is the catch-all that refuses


def test_the_drill_workflow_installs_the_node_packages_before_it_chooses(tmp_path: Path) -> None:
    """`choose` checks for root and the node packages: installed after it, they were never there
    on a fresh root runner, so its real nodes never ran. The install goes on where it cannot
    install (exit 3: not root, no apt-get), and fails on anything else."""
    (job,) = _load(REPO / "examples" / "gitops" / "workflows" / "together-drill.yml")[
        "jobs"
    ].values()
    runs = [step.get("run", "") for step in job["steps"]]
    (install,) = [n for n, run in enumerate(runs) if "scripts/node-deps.sh" in run]
    (where,) = [n for n, run in enumerate(runs) if "together_drill.ci choose" in run]
    assert install < where
    (tmp_path / "scripts").mkdir()
    for status, passes in ((0, True), (3, True), (2, False), (1, False)):
        (tmp_path / "scripts" / "node-deps.sh").write_text(f"exit {status}\n")
        step = subprocess.run(["bash", "-eo", "pipefail", "-c", runs[install]], cwd=tmp_path)
        assert (step.returncode == 0) is passes, status
