"""The four GitOps workflows (examples/gitops/workflows), run by a real Actions runner.

nektos/act (tools/act) runs each workflow in host mode (testkit/act.py) against one simulator and
the GitHub REST contract server (testkit/github_server.py), with the local stand-ins of
tests/gitops/actions for checkout, setup-python, setup-go and cache. Every job checks out a tree
of this repository: `main` as it is, or `pr`, where dev raises its preemptible target (an
in-place update) and staging moves to CUDA 12.9 (a replacement), or `drill`, where the PR
renders a Job that ignores SIGTERM. The tests run in order, each on what the one before left
(act runs cost engine time, so there are five):

1. apply on main (dev and staging): both stacks come up from their saved plans;
2. preview of the PR: one comment per stack with its figures; staging fails the gate;
3. the same PR with the approval label: staging passes, its comment edited in place;
4. drift after dev's target was moved through the API: the job fails and opens an issue;
5. the drill of the PR's Job, on real nodes where this machine can run them (else the line why
   not): its verdict is edited into dev's comment, whose preview stays.

Each job's `make venv policy` finds the virtualenvs in place: the tree carries two tiny
virtualenvs that load this checkout's .venv and policy/venv (see `_overlay_venv`), so no job
installs packages.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from testkit.act import ActRun, run_act
from testkit.github_server import GitHubServer
from testkit.pulumi_env import REPO, PulumiEnv, fresh_clone
from testkit.realnodes import done_beside_others, real_nodes_beside_others
from testkit.sim import SimulatorProcess
from tests.clusters import live_clusters
from together_api.client import TogetherClient
from together_api.wire import Cluster, ClusterUpdateRequest
from together_drill.ci import choose
from together_drill.manifest import checkpointing_job
from together_drill.world import host_unavailable
from together_provider.gitops.post import MARKER, split_drill
from together_provider.preview import load_price_table

pytestmark = pytest.mark.engine

WORKFLOWS = REPO / "examples" / "gitops" / "workflows"
API_KEY = "sk-gitops-act-5d1e"
TOKEN = "ghs-act-contract-token"
REPOSITORY = "acme/gpu"
PR = 42
PASSPHRASE = "demo-passphrase"  # the salts in stacks/Pulumi.*.yaml belong to the demo's
REFS = {"push": "refs/heads/main", "pull_request": f"refs/pull/{PR}/merge"}
REFS["workflow_dispatch"] = REFS["push"]
RATE = load_price_table().rates["H100_SXM"]


def _overlay_venv(path: Path, base: Path) -> None:
    """A virtualenv at `path` without packages of its own that loads `base`'s (a .pth calling
    site.addsitedir, so `base`'s own .pth files, the editable install among them, apply), with
    the Makefile's stamp so `make venv`/`make policy` see it as current."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True)
    (site_packages,) = path.glob("lib/python*/site-packages")
    (base_site,) = base.glob("lib/python*/site-packages")
    line = f"import site; site.addsitedir({str(base_site)!r})\n"
    (site_packages / "overlay.pth").write_text(line)
    (path / ".installed").touch()


def _tree(destination: Path, clusters: dict[str, dict[str, Any]] | None = None) -> Path:
    """A checkout: the repository, its two virtualenvs, and `clusters` edits per stack file."""
    tree = fresh_clone(destination)
    _overlay_venv(tree / ".venv", Path(sys.prefix))
    _overlay_venv(tree / "policy" / "venv", REPO / "policy" / "venv")
    for stack, changes in (clusters or {}).items():
        stack_file = tree / "stacks" / f"Pulumi.{stack}.yaml"
        settings = yaml.safe_load(stack_file.read_text())
        settings["config"]["together-gpu-clusters:clusters"]["train"].update(changes)
        stack_file.write_text(yaml.safe_dump(settings, sort_keys=False))
    return tree


@dataclass
class GitOps:
    """The simulator, the contract server and everything a workflow run needs."""

    root: Path
    sim: SimulatorProcess
    github: GitHubServer
    env: dict[str, str]
    backend: str
    main: Path
    pr: Path

    def run(
        self, workflow: str, event_name: str, event: dict[str, Any], tree: Path, *matrix: str
    ) -> ActRun:
        run_root = self.root / "runs" / f"{workflow}-{len(list(self.root.glob('runs/*')))}"
        return run_act(
            WORKFLOWS / workflow,
            event_name,
            event,
            root=run_root,
            checkout=tree,
            env=self.env,
            secrets={
                "PULUMI_CONFIG_PASSPHRASE": PASSPHRASE,
                "TOGETHER_API_KEY": API_KEY,
                "GITHUB_TOKEN": TOKEN,
            },
            variables={"PULUMI_BACKEND_URL": self.backend},
            github_env={
                "GITHUB_REPOSITORY": REPOSITORY,
                "GITHUB_API_URL": self.github.url,
                "GITHUB_REF": REFS[event_name],
                "SHA_REF": "0" * 40,
            },
            matrix=[f"stack:{stack}" for stack in matrix],
        )

    def pull_request(self, labels: list[str]) -> dict[str, Any]:
        return {
            "action": "labeled" if labels else "opened",
            "number": PR,
            "pull_request": {
                "number": PR,
                "labels": [{"name": name} for name in labels],
                "head": {"ref": "raise-dev-target"},
                "base": {"ref": "main"},
            },
            "repository": {"full_name": REPOSITORY, "name": "gpu", "owner": {"login": "acme"}},
        }


@pytest.fixture(scope="module")
def gitops(engine: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[GitOps]:
    subprocess.run(["make", "-s", "venv", "policy"], cwd=REPO, check=True, capture_output=True)
    root = tmp_path_factory.mktemp("gitops-act")
    main = _tree(root / "main")
    pr = _tree(
        root / "pr",
        {"dev": {"numPreemptibleGpus": 24}, "staging": {"cudaVersion": "12.9"}},
    )
    pulumi = PulumiEnv(
        root=root, bin_dir=engine, extra_env={"PULUMI_CONFIG_PASSPHRASE": PASSPHRASE}
    )
    # Each job runs the tree's tools/pulumi-engine/build.sh: it must find the engine built, not
    # start a build of its own inside the job.
    where = subprocess.run(
        ["bash", str(main / "tools" / "pulumi-engine" / "build.sh"), "--where"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert (Path(where) / "pulumi").exists(), f"no engine in {where}: run `make engine` first"
    pulumi.home.mkdir()
    pulumi.backend_dir.mkdir()
    for stack in ("dev", "staging", "prod"):  # created once by whoever set the repository up
        pulumi.run(main, "stack", "init", stack)
    with (
        SimulatorProcess(root / "simulator", time_scale=600, api_key=API_KEY) as sim,
        GitHubServer(token=TOKEN, repos=(REPOSITORY,)) as github,
    ):
        github.seed_pull_request(REPOSITORY, PR)
        env = {
            **os.environ,
            **pulumi.env_vars,
            "PATH": os.environ.get("PATH", ""),  # the workflows put the engine on PATH themselves
            "TOGETHER_BASE_URL": sim.base_url,
        }
        for variable in ("PULUMI_BACKEND_URL", "PULUMI_CONFIG_PASSPHRASE", "VIRTUAL_ENV"):
            env.pop(variable, None)  # from the workflow's vars and secrets, or nobody's
        yield GitOps(root, sim, github, env, pulumi.backend_dir.as_uri(), main, pr)


def _cluster(sim: SimulatorProcess, project: str) -> Cluster:
    (cluster,) = [c for c in live_clusters(sim) if c.project_id == project]
    return cluster


def _cost(gpus: float) -> str:
    """A cost at the bundled rate: a placeholder, so marked."""
    return f"${gpus * RATE:,.2f}†"


def _row(comment: str) -> list[str]:
    line = next(row for row in comment.splitlines() if row.startswith("| `train`"))
    return [cell.strip() for cell in line.strip("|").split("|")]


def test_apply_brings_each_stack_up_from_its_saved_plan(gitops: GitOps) -> None:
    run = gitops.run("together-apply.yml", "push", {"ref": "refs/heads/main"}, gitops.main,
                     "dev", "staging")  # fmt: skip
    assert run.jobs() == {"dev": "success", "staging": "success"}, run.log()
    for stack in ("dev", "staging"):
        steps = run.steps(stack)
        assert steps["Preview and save the update plan"] == "success", run.output(stack)
        assert steps["Apply exactly the saved plan"] == "success", run.output(stack)
    dev, staging = _cluster(gitops.sim, "proj-ml-dev"), _cluster(gitops.sim, "proj-ml-staging")
    assert (dev.num_gpus, dev.desired_preemptible_gpus) == (8, 16)
    assert (staging.num_gpus, staging.desired_preemptible_gpus) == (16, 32)
    assert [c.project_id for c in live_clusters(gitops.sim)].count("proj-ml-prod") == 0


def _comments(gitops: GitOps) -> dict[str, dict[str, Any]]:
    """The PR's comments by the stack their hidden first line names (each stack once)."""
    by_stack: dict[str, dict[str, Any]] = {}
    for comment in gitops.github.comments(REPOSITORY, PR):
        (stack,) = [s for s in ("dev", "staging", "prod") if comment["body"].startswith(
            MARKER.format(stack=s))]  # fmt: skip
        assert stack not in by_stack, f"two comments for {stack}"
        by_stack[stack] = comment
    return by_stack


def test_the_preview_comments_once_per_stack_and_gates_the_replacement(gitops: GitOps) -> None:
    run = gitops.run("together-preview.yml", "pull_request", gitops.pull_request([]), gitops.pr)
    assert run.jobs() == {"dev": "success", "staging": "failure", "prod": "success"}, run.log()
    assert run.steps("staging")["Gate on the preview"] == "failure"
    staging = run.output("staging")  # whole in the message: pytest cuts a long `in` short
    assert "staging replaces or deletes a cluster: add the approve-replacement label" in staging, (
        staging
    )
    comments = _comments(gitops)
    assert sorted(comments) == ["dev", "prod", "staging"]
    dev, staging, prod = (comments[s]["body"] for s in ("dev", "staging", "prod"))
    # dev: the floor of its declared range (16..32) raised to 24, so the live target 16 goes up
    # to 24; priced at half the on-demand rate, filled.
    assert _row(dev)[1:3] == ["in-place update", "H100_SXM"]
    assert _row(dev)[3:5] == ["8", "24\u201332, live 16"]
    # The workflow's preview refreshes: the live figures were read from Together, and say so.
    assert "| Allocated now (refreshed) |" in dev and "Not refreshed" not in dev
    # Priced as the update PUTs it: the live 16 now, the new floor 24 after.
    assert _row(dev)[6] == f"{_cost(8 + 8)} \u2192 {_cost(8 + 12)}"
    # staging: CUDA 12.8 -> 12.9 replaces the cluster at the same size and cost.
    assert _row(staging)[1:5] == ["**replace**", "H100_SXM", "16", "32"]
    assert _row(staging)[6:] == [_cost(16 + 16), "±$0.00†"]
    assert "`train` is **replaced** (because of `cuda_version`)" in staging
    assert "Needs the `approve-replacement` label" in staging
    # prod has no clusters yet: both are created.
    assert "| `serve` | create" in prod and "| `train` | create" in prod


def test_the_approval_label_passes_the_gate_and_edits_the_comment(gitops: GitOps) -> None:
    before = _comments(gitops)
    gitops.github.set_labels(REPOSITORY, PR, ["approve-replacement"])
    event = gitops.pull_request(["approve-replacement"])
    run = gitops.run("together-preview.yml", "pull_request", event, gitops.pr, "staging")
    assert run.jobs() == {"staging": "success"}, run.log()
    assert "staging: replacement or deletion approved by the approve-replacement label" in (
        run.output("staging")
    )
    after = _comments(gitops)
    assert {s: c["id"] for s, c in after.items()} == {s: c["id"] for s, c in before.items()}
    assert "Approved by the `approve-replacement` label" in after["staging"]["body"]
    assert after["dev"]["body"] == before["dev"]["body"]


def test_drift_fails_the_job_and_opens_an_issue(gitops: GitOps) -> None:
    dev = _cluster(gitops.sim, "proj-ml-dev")
    with TogetherClient(api_key=API_KEY, base_url=gitops.sim.base_url) as client:
        client.update_cluster(dev.cluster_id, ClusterUpdateRequest(num_preemptible_gpus=8))
    run = gitops.run("together-drift.yml", "workflow_dispatch", {}, gitops.main, "dev")
    assert run.jobs() == {"dev": "failure"}, run.log()
    steps = run.steps("dev")
    assert steps["Open or update the drift issue"] == "success", run.output("dev")
    assert steps["Fail visibly on drift"] == "failure"
    (issue,) = [i for i in gitops.github.issues(REPOSITORY) if "pull_request" not in i]
    assert issue["title"] == "Together clusters drifted: dev"
    assert [label["name"] for label in issue["labels"]] == ["drift"]
    assert "pulumi exit 7" in issue["body"] and "num_preemptible_gpus" in issue["body"]


PYTHON_IMAGE = "localhost/together-python:3.11"  # tools/images/build.sh, from worker/
JOB_GRACE = 6  # seconds: the Job ignores SIGTERM, so each reclaim costs this much


def _drill_tree(root: Path) -> Path:
    """The PR's tree with a Job in rendered/, as renderYamlTo writes it: CheckpointingWorker's
    Job (built by the same functions) whose command ignores SIGTERM."""
    tree = _tree(root)
    script = (REPO / "tests" / "integration" / "drill" / "ignores_sigterm.py").read_text()
    job = checkpointing_job(PYTHON_IMAGE, ["python3", "-u", "-c", script], JOB_GRACE, local=False)
    manifest = {**job.manifest, "metadata": {**job.manifest["metadata"], "name": "train"}}
    path = tree / "rendered" / "1-manifest" / "batch_v1-job-default-train.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(yaml.safe_dump(manifest, sort_keys=False))
    return tree


def test_the_drill_adds_its_verdict_to_the_stacks_comment(gitops: GitOps) -> None:
    """Real nodes here when this machine can run them (root, the node packages): the Job is
    unsafe (SIGTERM_IGNORED), the gate fails, and dev's comment, edited in place, keeps its
    preview and gains the drill's section with the problem's sentence and fix. Elsewhere the
    workflow says in one line why it did not drill, and the comment says the same."""
    before = _comments(gitops)["dev"]
    unavailable = host_unavailable()
    tree = _drill_tree(gitops.root / "drill")
    held = None if unavailable else real_nodes_beside_others()
    try:
        run = gitops.run("together-drill.yml", "pull_request", gitops.pull_request([]), tree)
    finally:
        if held is not None:
            done_beside_others(held)
    (run_root,) = sorted(gitops.root.glob("runs/together-drill.yml-*"))[-1:]
    report = json.loads((run_root / "artifacts" / "drill-report" / "drill.json").read_text())
    after = _comments(gitops)["dev"]
    assert after["id"] == before["id"]  # one comment per stack, edited in place
    head, drill = split_drill(after["body"])
    assert head == split_drill(before["body"])[0]  # the preview stays as it was
    assert drill is not None, after["body"]
    assert "/acme/gpu/actions/runs/" in drill and "/artifacts/1)" in drill  # the full report
    output = run.output("drill")
    if unavailable:
        why = choose(unavailable, kubeconfig_given=False).why
        assert run.jobs() == {"drill": "success"}, run.log()
        assert why in output, output
        assert report == {"verdict": "not_drilled", "exit_code": 2, "reason": why}
        assert "**could not drill**" in drill and why in drill
        return
    assert "drilling on real nodes: this runner is root" in output, output
    assert run.jobs() == {"drill": "failure"}, run.log()
    steps = run.steps("drill")
    assert steps["Add the verdict to the stack's comment"] == "success", output
    assert steps["Gate on the drill"] == "failure", output
    assert "the Job loses work when its node is reclaimed" in output
    assert report["verdict"] == "unsafe", report
    (problem,) = report["problems"]
    assert problem["code"] == "SIGTERM_IGNORED"
    assert "### Reclaim drill of Job `train`: :x: **unsafe**" in drill
    assert problem["sentence"] in drill and problem["fix"] in drill
