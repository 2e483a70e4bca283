"""Engine tests' shared steps: stacks of the cluster test programs, and what the simulator and
the stored state hold (the ground truth a test compares the two against)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pulumi import automation as auto

from testkit.pulumi_env import REPO, PulumiEnv, provider_config
from testkit.sim import SimulatorProcess
from tests.integration.conftest import PROGRAMS
from together_api.client import TogetherClient
from together_api.wire import Cluster
from together_provider.cluster.table import CLUSTER_TYPE

__all__ = [
    "CLUSTER_TYPE",
    "FAST_SIMULATOR",
    "all_clusters",
    "cluster_stack",
    "fails",
    "live_clusters",
    "pending_operations",
    "preview_error",
    "repo_program",
    "set_clusters",
    "state_clusters",
    "stored_outputs",
    "successful_posts",
    "together_client",
]

FAST_SIMULATOR = pytest.mark.parametrize("simulator", [{"time_scale": 600}], indirect=True)
"""A test's or a module's simulator at 600x: a cluster's 6 minutes of provisioning take 0.6 s."""


def cluster_stack(
    env: PulumiEnv,
    sim: SimulatorProcess,
    clusters: dict[str, dict[str, Any]],
    *,
    program: str = "cluster",
    stack_name: str = "test",
    api_key: str | None = None,
    host: str | None = None,
) -> tuple[auto.Stack, Path]:
    """A stack of `program` declaring `clusters` (name -> args), and its work dir; `host`
    (`native`) is the program's `host` config, which picks the host its resources use."""
    work = env.root / "projects" / program
    if not work.exists():
        work = env.project(PROGRAMS / program)
    stack = env.stack(
        work,
        stack_name,
        config={
            "clusters": json.dumps(clusters),
            **provider_config(sim, api_key),
            **({"host": host} if host else {}),
        },
    )
    return stack, work


DEMO_PASSPHRASE = "demo-passphrase"  # the committed stack files' salts belong to it


def repo_program(env: PulumiEnv, sim: SimulatorProcess, source: Path) -> Path:
    """The repo's own program and its committed stack files (copied to `source`), set up in
    `env` against `sim`: its work dir, whose stacks are `dev`, `staging` and `prod`."""
    source.mkdir()
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(REPO / name, source / name)
    shutil.copytree(REPO / "stacks", source / "stacks")
    env.extra_env.update(
        {
            "PULUMI_CONFIG_PASSPHRASE": DEMO_PASSPHRASE,
            "TOGETHER_API_KEY": sim.api_key,
            "TOGETHER_BASE_URL": sim.base_url,
        }
    )
    return env.project(source, name="together-gpu-clusters")


def set_clusters(stack: auto.Stack, clusters: dict[str, dict[str, Any]]) -> None:
    stack.set_config("clusters", auto.ConfigValue(json.dumps(clusters)))


def together_client(sim: SimulatorProcess) -> TogetherClient:
    """A client of the simulator, with its key: what a test checks the engine's work with."""
    return TogetherClient(api_key=sim.api_key, base_url=sim.base_url)


def live_clusters(sim: SimulatorProcess) -> list[Cluster]:
    """Every cluster the simulator holds that is not on its way out."""
    with together_client(sim) as client:
        return [c for c in client.list_clusters() if not c.is_deleting]


def all_clusters(sim: SimulatorProcess) -> list[Cluster]:
    with together_client(sim) as client:
        return client.list_clusters()


def state_clusters(env: PulumiEnv, work: Path, stack_name: str = "test") -> dict[str, str]:
    """Cluster resources in the stored state: resource name -> cluster id."""
    resources = env.exported_state(work, stack_name)["deployment"].get("resources") or []
    return {r["urn"].rsplit("::", 1)[1]: r["id"] for r in resources if r["type"] == CLUSTER_TYPE}


def pending_operations(env: PulumiEnv, work: Path, stack_name: str = "test") -> list[Any]:
    deployment = env.exported_state(work, stack_name)["deployment"]
    return list(deployment.get("pending_operations") or [])


def successful_posts(sim: SimulatorProcess) -> int:
    return sum(1 for r in sim.requests() if r["method"] == "POST" and r["status"] == 200)


def stored_outputs(env: PulumiEnv, work: Path, stack_name: str = "test") -> dict[str, Any]:
    """The outputs of the stack's one cluster as stored (refresh updates these; stack outputs
    only change when the program runs)."""
    (outputs,) = env.resource_outputs(work, CLUSTER_TYPE, stack_name)
    return outputs


def fails(operation: Callable[[], Any]) -> str:
    """What the engine printed for a failing `up`, `preview`, `refresh` or `destroy`."""
    with pytest.raises(auto.CommandError) as failed:
        operation()
    return str(failed.value)


def preview_error(stack: auto.Stack) -> str:
    """What a failing `pulumi preview` printed."""
    return fails(stack.preview)
