"""A corpus of bad specs, each rejected at `pulumi preview` through the real engine, with a
message naming the field, and with zero API calls.

How it is batched, and why that is sound:
- This engine stops a preview at the first resource whose check fails (the other resources'
  registrations die with "Resource monitor has terminated"); `preview` has no
  `--continue-on-error` and PULUMI_CONTINUE_ON_ERROR does not change that. So several bad
  *clusters* in one preview report only one of them, and which one varies.
- But every failure of *one* cluster is reported, one diagnostic per field. Field-local faults
  (types, ranges, enums, missing or unknown keys) are parsed independently per field, so faults
  on distinct fields are packed into one cluster; a fault that relates fields (a rule) gets a
  preview of its own. Each entry must still get a diagnostic naming its own field.
- Previews run two at a time, on two stacks. The program `raw_clusters` passes the properties as
  written, so unknown keys and missing fields reach the provider's check.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from testkit.pulumi_env import PulumiEnv
from testkit.sim import SimulatorProcess
from tests.clusters import cluster_stack
from tests.reliability.helpers import on_engine
from tests.specs import CLUSTER_SPEC as BASE

pytestmark = on_engine(600)
WORKERS = 2

# (what is wrong, the field the message must name, the overrides of BASE; None drops a key)
Bad = tuple[str, str, dict[str, Any]]
RULE_FAULTS: list[Bad] = [
    ("zero standard", "num_gpus", {"num_gpus": 0, "num_preemptible_gpus": 16}),
    ("standard below one node", "num_gpus", {"num_gpus": 4}),
    ("standard not a multiple of 8", "num_gpus", {"num_gpus": 12}),
    ("target not a multiple of 8", "num_preemptible_gpus", {"num_preemptible_gpus": 12}),
    (
        "SLURM with a preemptible target",
        "num_preemptible_gpus",
        {"cluster_type": "SLURM", "num_preemptible_gpus": 8},
    ),
    ("target without a project", "project_id", {"project_id": None, "num_preemptible_gpus": 8}),
    ("RESERVED without a length", "duration_days", {"billing_type": "RESERVED"}),
    ("a length without RESERVED", "duration_days", {"duration_days": 7}),
]
"""Faults that relate two fields (or a count to the node size): one preview each."""
FIELD_FAULTS: list[Bad] = [
    ("count as a string", "num_gpus", {"num_gpus": "8"}),
    ("count as a fractional float", "num_gpus", {"num_gpus": 8.5}),
    ("count as a bool", "num_gpus", {"num_gpus": True}),
    ("negative standard count", "num_gpus", {"num_gpus": -8}),
    ("target as a string", "num_preemptible_gpus", {"num_preemptible_gpus": "16"}),
    ("target as a fractional float", "num_preemptible_gpus", {"num_preemptible_gpus": 7.5}),
    ("target as a list", "num_preemptible_gpus", {"num_preemptible_gpus": [8]}),
    ("negative target", "num_preemptible_gpus", {"num_preemptible_gpus": -8}),
    ("unknown gpu_type", "gpu_type", {"gpu_type": "H100"}),
    ("gpu_type as a number", "gpu_type", {"gpu_type": 100}),
    ("unknown cluster_type", "cluster_type", {"cluster_type": "K8S"}),
    ("unknown billing_type", "billing_type", {"billing_type": "SPOT"}),
    ("zero-day reservation", "duration_days", {"billing_type": "RESERVED", "duration_days": 0}),
    ("91-day reservation", "duration_days", {"billing_type": "RESERVED", "duration_days": 91}),
    ("length as a string", "duration_days", {"billing_type": "RESERVED", "duration_days": "7"}),
    ("missing cluster_name", "cluster_name", {"cluster_name": None}),
    ("missing region", "region", {"region": None}),
    ("missing gpu_type", "gpu_type", {"gpu_type": None}),
    ("missing num_gpus", "num_gpus", {"num_gpus": None}),
    ("missing cuda_version", "cuda_version", {"cuda_version": None}),
    ("missing nvidia_driver_version", "nvidia_driver_version", {"nvidia_driver_version": None}),
    ("empty region", "region", {"region": "  "}),
    ("cuda_version as a float", "cuda_version", {"cuda_version": 12.8}),
    ("project_id as a number", "project_id", {"project_id": 42}),
    ("unknown key (typo)", "num_gpu", {"num_gpu": 8}),
    ("zero ready timeout", "ready_timeout_seconds", {"ready_timeout_seconds": 0}),
    ("ready timeout as text", "ready_timeout_seconds", {"ready_timeout_seconds": "30m"}),
]
# Conversions need the existing cluster CONVERTED (16 standard + 8 preemptible) to compare with.
CONVERTED: dict[str, Any] = {**BASE, "num_gpus": 16, "num_preemptible_gpus": 8}
CONVERSIONS: list[Bad] = [
    ("standard to preemptible", "num_gpus", {"num_gpus": 8, "num_preemptible_gpus": 16}),
    ("preemptible to standard", "num_gpus", {"num_gpus": 24, "num_preemptible_gpus": 0}),
]


def _preview_errors(env: PulumiEnv, work: Path, stack: str, spec: dict[str, Any]) -> list[str]:
    """The error diagnostics of one `pulumi preview --json` of the single cluster "bad"."""
    result = env.run(
        work,
        "preview",
        "--json",
        "--stack",
        stack,
        "--config",
        f"clusters={json.dumps({'bad': spec})}",
        check=False,
    )
    assert result.returncode != 0, f"preview accepted {spec}"
    diagnostics = json.loads(result.stdout)["diagnostics"]
    return [
        d["message"]
        for d in diagnostics
        if d["severity"] == "error" and d.get("urn", "").endswith("::bad")
    ]


def _pack(faults: list[Bad]) -> list[list[Bad]]:
    """Greedy groups of field faults on distinct fields touching distinct keys."""
    groups: list[list[Bad]] = []
    for fault in faults:
        for group in groups:
            fields = {f for _, f, _ in group}
            keys = {k for _, _, o in group for k in o}
            if fault[1] not in fields and not keys & fault[2].keys():
                group.append(fault)
                break
        else:
            groups.append([fault])
    return groups


def _check(
    env: PulumiEnv, work: Path, stacks: list[str], batches: list[list[Bad]], base: dict[str, Any]
) -> list[str]:
    """Preview each batch as one cluster (one worker per stack); return what went wrong."""

    def one(batch: list[Bad], stack: str) -> list[str]:
        spec = {**base}
        for _, _, overrides in batch:
            spec.update(overrides)
        errors = _preview_errors(env, work, stack, spec)
        return [
            f"{what}: no error naming {field!r} in {errors}"
            for what, field, _ in batch
            if not any(f"property {field} " in e for e in errors)
        ]

    def worker(slot: int) -> list[str]:
        # Each worker owns one stack, so its previews run one after another.
        return [p for b in batches[slot :: len(stacks)] for p in one(b, stacks[slot])]

    with ThreadPoolExecutor(len(stacks)) as pool:
        return [p for problems in pool.map(worker, range(len(stacks))) for p in problems]


def test_bad_specs_fail_at_preview_naming_the_field_without_api_calls(
    pulumi_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    assert len(RULE_FAULTS) + len(FIELD_FAULTS) + len(CONVERSIONS) >= 30
    stacks = [f"w{i}" for i in range(WORKERS)]
    work = Path()
    for name in stacks:
        _, work = cluster_stack(pulumi_env, simulator, {}, program="raw_clusters", stack_name=name)
    batches = [[fault] for fault in RULE_FAULTS] + _pack(FIELD_FAULTS)
    assert len(batches) < len(RULE_FAULTS) + len(FIELD_FAULTS)
    assert _check(pulumi_env, work, stacks, batches, BASE) == []
    assert simulator.requests() == []


def test_conversions_of_an_existing_cluster_fail_at_preview_without_api_calls(
    pulumi_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    stack, work = cluster_stack(
        pulumi_env, simulator, {"bad": CONVERTED}, program="raw_clusters", stack_name="existing"
    )
    stack.up()
    simulator.reset_requests()
    batches = [[conversion] for conversion in CONVERSIONS]
    assert _check(pulumi_env, work, ["existing"], batches, CONVERTED) == []
    assert simulator.requests() == []
