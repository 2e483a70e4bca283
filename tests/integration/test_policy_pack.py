"""The policy pack (policy/) through the REAL engine: `pulumi preview --policy-pack policy`.

The pack runs in its own virtualenv (policy/venv, `make policy`), started by the engine through
the Python language host's RunPlugin. One program (programs/policy) declares clusters on both
hosts, a shared volume and plain pulumi-kubernetes workloads (rendered, so no API server); each
scenario is one preview, and several policies are checked per preview:

- `bad`, with a per-stack pack config that makes every policy advisory and caps the budget: every
  workload, volume and budget policy is violated once, and nothing bails early;
- `dynamic-cluster` and `native-cluster`, default levels: the provider's rules, mandatory;
- `good`, default levels: nothing is violated;
- `up`: a mandatory violation stops `pulumi up` before the simulator sees any request.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from testkit.pulumi_env import (
    PLUGIN_DIR,
    REPO,
    PulumiEnv,
    install_k8s_plugin,
    provider_config,
)
from testkit.sim import SimulatorProcess
from tests.integration.conftest import PROGRAMS
from tests.specs import CLUSTER_SPEC
from together_policy.pack import POLICIES
from together_provider.preview.__main__ import main as preview_main
from together_provider.preview.policy import PolicyViolation, read_policy_events

pytestmark = pytest.mark.engine

PACK = REPO / "policy"
ADVISORY_EVERYWHERE: dict[str, Any] = {
    **{p.name: "advisory" for p in POLICIES},
    "gpu-budget": {
        "enforcementLevel": "advisory",
        "maxStandardGpus": 16,
        "maxPreemptibleGpus": 0,
        "maxUsdPerHour": 50,
        "pricesPerGpuHour": {"H100_SXM": 2.5},  # the stack's own rate, not the placeholder
    },
}


@dataclass
class Run:
    result: subprocess.CompletedProcess[str]
    violations: tuple[PolicyViolation, ...]
    preview_json: Path
    events: Path

    def by_policy(self, name: str) -> list[PolicyViolation]:
        return [v for v in self.violations if v.policy == name]


def _pack_venv() -> None:
    """The pack's virtualenv, as `make test` creates it (`make policy`; a no-op when current)."""
    subprocess.run(["make", "-s", "policy"], cwd=REPO, check=True, capture_output=True)


@pytest.fixture(scope="module")
def policy_env(engine: Path, tmp_path_factory: pytest.TempPathFactory) -> PulumiEnv:
    _pack_venv()
    root = tmp_path_factory.mktemp("policy")
    path = os.pathsep.join([str(engine), str(PLUGIN_DIR), os.environ.get("PATH", "")])
    install_k8s_plugin(root / "pulumi-home")
    return PulumiEnv(
        root=root,
        bin_dir=engine,
        # --event-log (the violations, for the PR comment) is behind PULUMI_DEBUG_COMMANDS, which
        # the Automation API sets for its own event stream too.
        extra_env={
            "PATH": path,
            "KUBECONFIG": str(root / "no-kubeconfig"),
            "PULUMI_DEBUG_COMMANDS": "true",
        },
    )


@pytest.fixture(scope="module")
def work(policy_env: PulumiEnv) -> Path:
    return policy_env.project(PROGRAMS / "policy")


def preview(
    env: PulumiEnv,
    work: Path,
    scenario: str,
    pack_config: dict[str, Any] | None = None,
    pack: Path = PACK,
) -> Run:
    env.stack(
        work,
        scenario,
        config={
            "scenario": scenario,
            "cluster": json.dumps(CLUSTER_SPEC),
            "renderYamlTo": str(env.root / scenario),
        },
    )
    events, out = env.root / f"{scenario}.events", env.root / f"{scenario}.json"
    args = ["preview", "--json", "--stack", scenario, "--policy-pack", str(pack)]
    if pack_config is not None:
        config_file = env.root / f"{scenario}.policy.json"
        config_file.write_text(json.dumps(pack_config))
        args += ["--policy-pack-config", str(config_file)]
    result = env.run(work, *args, "--event-log", str(events), check=False)
    out.write_text(result.stdout)
    return Run(result, read_policy_events(events), out, events)


@pytest.fixture(scope="module")
def bad(policy_env: PulumiEnv, work: Path) -> Run:
    return preview(policy_env, work, "bad", ADVISORY_EVERYWHERE)


@pytest.fixture(scope="module")
def good(policy_env: PulumiEnv, work: Path) -> Run:
    return preview(policy_env, work, "good")


@pytest.fixture(scope="module")
def bad_clusters(policy_env: PulumiEnv, work: Path) -> dict[str, Run]:
    return {host: preview(policy_env, work, f"{host}-cluster") for host in ("dynamic", "native")}


def test_every_workload_volume_and_budget_policy_is_violated_once(bad: Run) -> None:
    assert bad.result.returncode == 0, bad.result.stderr  # advisory only: the preview passes
    found = {(v.policy, v.resource) for v in bad.violations}
    assert found == {
        ("critical-workload-off-preemptible", "api"),
        ("disruption-budget-off-preemptible", "web"),
        ("drain-window-grace-period", "shell"),
        ("compute-class-constraint", "web"),
        ("compute-class-constraint", "shell"),
        ("preemptible-job-checkpoints", "train"),
        ("preemptible-job-checkpoints", "nightly"),
        ("preemptible-job-shell-wrapper", "train"),
        ("checkpoint-volume-lifecycle-independent", "ckpt"),
        ("gpu-budget", None),
    }
    assert len(bad.violations) == 13  # nightly: 2; gpu-budget: standard, preemptible and $/h
    assert {v.level for v in bad.violations} == {"advisory"}  # the stack's config, not defaults
    assert {v.pack for v in bad.violations} == {"together-preemptible"}


def test_messages_name_the_resource_field_value_and_fix(bad: Run) -> None:
    (grace,) = bad.by_policy("drain-window-grace-period")
    assert grace.message.startswith("Pod 'shell': terminationGracePeriodSeconds=600 is longer")
    assert "fix: set terminationGracePeriodSeconds <= 300" in grace.message
    (critical,) = bad.by_policy("critical-workload-off-preemptible")
    assert "Deployment 'api' is critical (label together.ai/critical" in critical.message
    assert "nodeSelector together.ai/compute-class=preemptible" in critical.message
    jobs = [v.message for v in bad.by_policy("preemptible-job-checkpoints")]
    assert sum("CronJob 'nightly'" in m for m in jobs) == 2  # failure policy and mount
    (train,) = (m for m in jobs if "Job 'train'" in m)  # a rule naming it, but not Ignore
    assert "no rule ignoring pods with the DisruptionTarget condition" in train
    assert "'action': 'FailJob'" in train and "'action': 'Count'" in train
    (shell,) = bad.by_policy("preemptible-job-shell-wrapper")
    assert shell.message.startswith("Job 'train' runs on preemptible nodes, and container 'main'")
    assert "(sh -c with 2 commands and no exec: 'python prep.py; python train.py')" in shell.message
    assert "fix: run it under the launcher" in shell.message
    (volume,) = bad.by_policy("checkpoint-volume-lifecycle-independent")
    assert "is_lifecycle_independent=False" in volume.message and "'dyn'" in volume.message
    standard, preemptible, cost = (v.message for v in bad.by_policy("gpu-budget"))
    assert "num_gpus=24 standard GPUs in total, above the cap maxStandardGpus=16" in standard
    assert "num_preemptible_gpus=8 preemptible GPUs in total" in preemptible
    assert "above the cap maxUsdPerHour=50" in cost
    # 24 standard and 8 preemptible H100s at the config's 2.50 (and half that for preemptible)
    assert "$70.00/h" in cost and "rates from the policy config's pricesPerGpuHour" in cost


@pytest.mark.parametrize(
    ("host", "resource", "expected"),
    [
        ("dynamic", "dyn", "Cluster 'dyn' (num_gpus): num_gpus=0 leaves no standard node"),
        ("native", "nat", "Cluster 'nat' (num_preemptible_gpus): num_preemptible_gpus=12 is not"),
    ],
)
def test_the_provider_rules_are_mandatory_on_both_hosts(
    bad_clusters: dict[str, Run], host: str, resource: str, expected: str
) -> None:
    run = bad_clusters[host]
    assert run.result.returncode != 0
    (violation,) = run.by_policy("cluster-provider-rules")
    assert (violation.level, violation.resource) == ("mandatory", resource)
    assert violation.message.startswith(expected)


def test_a_program_that_follows_every_policy_passes(good: Run) -> None:
    assert good.result.returncode == 0, good.result.stderr
    assert good.violations == ()


def test_the_pr_comment_lists_advisories_and_blocks_on_a_mandatory_violation(
    bad: Run, bad_clusters: dict[str, Run], tmp_path: Path
) -> None:
    comment = tmp_path / "comment.md"
    code = preview_main(
        [
            "--stack", f"bad={bad.preview_json}",
            "--policy-events", f"bad={bad.events}",
            "--output", str(comment),
        ]
    )  # fmt: skip
    text = comment.read_text()
    assert code == 10  # creates only; advisories do not block
    assert "**13 advisory policy violation(s)** (not blocking)" in text
    assert "> - **drain-window-grace-period** (advisory) on `shell`: Pod 'shell'" in text
    assert "> - **gpu-budget** (advisory) on the stack:" in text
    blocked = bad_clusters["dynamic"]  # the comment tool reads the dynamic host's clusters
    code = preview_main(
        [
            "--stack", f"dyn={blocked.preview_json}",
            "--policy-events", f"dyn={blocked.events}",
            "--output", str(comment),
        ]
    )  # fmt: skip
    assert code == 12
    assert "**Blocked by 1 mandatory policy violation(s)**" in comment.read_text()


def test_a_mandatory_violation_stops_up_before_any_api_call(
    policy_env: PulumiEnv, work: Path
) -> None:
    with SimulatorProcess(
        policy_env.root / "simulator", time_scale=600, api_key="sk-policy"
    ) as sim:
        policy_env.stack(
            work,
            "up",
            config={
                "scenario": "up",
                "cluster": json.dumps(CLUSTER_SPEC),
                "renderYamlTo": str(policy_env.root / "up"),
                **provider_config(sim),
            },
        )
        events = policy_env.root / "up.events"
        result = policy_env.run(
            work, "up", "--yes", "--stack", "up", "--policy-pack", str(PACK),
            "--event-log", str(events), check=False,
        )  # fmt: skip
        assert result.returncode != 0
        (violation,) = read_policy_events(events)
        assert (violation.policy, violation.level) == ("drain-window-grace-period", "mandatory")
        assert sim.requests() == []
    assert list((policy_env.root / "up").rglob("*.yaml")) == []  # the Pod was not rendered either


def test_the_demo_stacks_pass_the_pack_with_their_own_config(
    policy_env: PulumiEnv, tmp_path: Path
) -> None:
    source = tmp_path / "source"
    source.mkdir()
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(REPO / name, source / name)
    shutil.copytree(REPO / "stacks", source / "stacks")
    program = policy_env.project(source, name="together-gpu-clusters")
    demo = PulumiEnv(
        root=policy_env.root,
        bin_dir=policy_env.bin_dir,
        extra_env={**policy_env.extra_env, "PULUMI_CONFIG_PASSPHRASE": "demo-passphrase"},
    )
    for stack in ("dev", "staging", "prod"):
        demo.stack(program, stack)
        events = tmp_path / f"{stack}.events"
        args = ["preview", "--stack", stack, "--policy-pack", str(PACK)]
        if (PACK / "config" / f"{stack}.json").exists():
            args += ["--policy-pack-config", str(PACK / "config" / f"{stack}.json")]
        result = demo.run(program, *args, "--event-log", str(events), check=False)
        assert result.returncode == 0, result.stdout + result.stderr
        assert read_policy_events(events) == ()


def test_the_pack_names_its_virtualenv_because_a_pack_gets_no_default(
    policy_env: PulumiEnv, work: Path, tmp_path: Path
) -> None:
    """A release Pulumi's Python host gives a policy pack (an analyzer) no `./venv` default, and
    so does ours: a pack whose PulumiPolicy.yaml names no virtualenv runs in the ambient python3
    (here the project's .venv, which has no pulumi_policy) and never starts. Ours naming
    `venv` is what lets every other test here pass on either host."""
    settings = yaml.safe_load((PACK / "PulumiPolicy.yaml").read_text())
    assert settings["runtime"] == {"name": "python", "options": {"virtualenv": "venv"}}

    unnamed = tmp_path / "pack"
    shutil.copytree(PACK, unnamed, ignore=shutil.ignore_patterns("venv", "__pycache__"))
    (unnamed / "venv").symlink_to(PACK / "venv", target_is_directory=True)
    (unnamed / "PulumiPolicy.yaml").write_text(yaml.safe_dump({**settings, "runtime": "python"}))
    run = preview(policy_env, work, "good", pack=unnamed)
    assert run.result.returncode != 0
    output = run.result.stdout + run.result.stderr
    assert "No module named 'pulumi_policy'" in output, output
