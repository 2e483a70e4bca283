"""Engine tests' shared steps for the native plugin (`pulumi-resource-together`).

The plugin is the console script pip installed beside this interpreter; the engine finds it on
PATH, as it does for a user whose virtualenv is active (`source .demo/env` does the same).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import yaml

from testkit.pulumi_env import PLUGIN_DIR, PulumiEnv, native_pulumi_env, tool_bin
from testkit.sim import SimulatorProcess
from tests.clusters import cluster_stack, together_client
from tests.specs import CLUSTER_SPEC
from together_api.wire import ClusterCreateRequest
from together_provider.registry import CLUSTER, VOLUME

CLUSTER_TOKEN = CLUSTER.token
VOLUME_TOKEN = VOLUME.token

__all__ = [
    "CLUSTER_TOKEN",
    "PLUGIN_DIR",
    "VOLUME_TOKEN",
    "go_codegen_bin",
    "go_langhost_bin",
    "import_legacy",
    "legacy_cluster",
    "native_pulumi_env",
    "native_stack",
    "nodejs_langhost_bin",
    "pin_plugin",
    "ts_codegen_bin",
    "yaml_langhost_bin",
]


native_stack = functools.partial(cluster_stack, host="native")
"""`cluster_stack` of the `cluster` program on the native plugin: (env, sim, clusters, ...)."""


def legacy_cluster(sim: SimulatorProcess) -> str:
    """The id of a Ready cluster, `legacy` (`CLUSTER_SPEC`), made outside Pulumi: what a user
    brings under a program with `pulumi import`."""
    with together_client(sim) as client:
        request = ClusterCreateRequest(
            **CLUSTER_SPEC, cluster_name="legacy", billing_type="ON_DEMAND"
        )
        cluster_id = client.create_cluster(request).cluster_id
    sim.advance(600)
    return cluster_id


def import_legacy(env: PulumiEnv, work: Path, cluster_id: str, out: Path) -> str:
    """`pulumi import` of the cluster `cluster_id` as `legacy` into the `test` stack of the
    program in `work`, on the plugin; returns the code it wrote to `out` for the program."""
    env.run(
        work, "import", CLUSTER_TOKEN, "legacy", cluster_id,
        "--yes", "--stack", "test", "--out", str(out),
    )  # fmt: skip
    return out.read_text()


def yaml_langhost_bin() -> Path:
    """The directory holding `pulumi-language-yaml` (tools/yaml-langhost/build.sh)."""
    return tool_bin("yaml-langhost")


def nodejs_langhost_bin() -> Path:
    """The directory holding our `pulumi-language-nodejs` (tools/nodejs-langhost/build.sh)."""
    return tool_bin("nodejs-langhost")


def go_langhost_bin() -> Path:
    """The directory holding our `pulumi-language-go` (tools/go-langhost/build.sh)."""
    return tool_bin("go-langhost")


def go_codegen_bin() -> Path:
    """The directory holding `go-codegen`, the Go SDK generator (tools/go-codegen)."""
    return tool_bin("go-codegen")


def ts_codegen_bin() -> Path:
    """The directory holding `ts-codegen`, the TypeScript SDK generator (tools/ts-codegen)."""
    return tool_bin("ts-codegen")


def pin_plugin(work: Path, settings: dict[str, Any] | None = None) -> None:
    """Write `work`'s Pulumi.yaml (`settings`, or the one there) naming the plugin's directory,
    as a non-Python program finds the plugin (`plugins.providers`), not through PATH."""
    project = work / "Pulumi.yaml"
    settings = settings or yaml.safe_load(project.read_text())
    settings["plugins"] = {"providers": [{"name": "together", "path": str(PLUGIN_DIR)}]}
    project.write_text(yaml.safe_dump(settings, sort_keys=False))
