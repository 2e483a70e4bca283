"""Engine tests' shared steps for the native plugin (`pulumi-resource-together`).

The plugin is the console script pip installed beside this interpreter; the engine finds it on
PATH, as it does for a user whose virtualenv is active (`source .demo/env` does the same).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pulumi import automation as auto

from testkit.pulumi_env import PLUGIN_DIR, PulumiEnv, native_pulumi_env, tool_bin
from testkit.sim import SimulatorProcess
from tests.clusters import cluster_stack
from together_provider.registry import CLUSTER, VOLUME

PROGRAM = "native_cluster"
CLUSTER_TOKEN = CLUSTER.token
VOLUME_TOKEN = VOLUME.token

__all__ = [
    "CLUSTER_TOKEN",
    "PLUGIN_DIR",
    "VOLUME_TOKEN",
    "native_pulumi_env",
    "native_stack",
    "nodejs_langhost_bin",
    "pin_plugin",
    "ts_codegen_bin",
    "yaml_langhost_bin",
]


def native_stack(
    env: PulumiEnv,
    sim: SimulatorProcess,
    clusters: dict[str, dict[str, Any]],
    *,
    stack_name: str = "test",
) -> tuple[auto.Stack, Path]:
    """A stack of the native `cluster` program declaring `clusters` (name -> args)."""
    return cluster_stack(env, sim, clusters, program=PROGRAM, stack_name=stack_name)


def yaml_langhost_bin() -> Path:
    """The directory holding `pulumi-language-yaml` (tools/yaml-langhost/build.sh)."""
    return tool_bin("yaml-langhost")


def nodejs_langhost_bin() -> Path:
    """The directory holding our `pulumi-language-nodejs` (tools/nodejs-langhost/build.sh)."""
    return tool_bin("nodejs-langhost")


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
