"""The two hosts a scenario of tests/integration/scenarios runs on, and what differs between them.

- `dynamic`: `together_provider.Cluster` / `SharedVolume`, Pulumi dynamic resources served by the
  Python SDK's dynamic provider (the program pickles the provider into the state).
- `native`: `together_provider.native.Cluster` / `SharedVolume`, served by the
  `pulumi-resource-together` plugin, which the engine finds on PATH.

A scenario says what a user does and sees; the `Host` says which program declares the resources,
which type the state stores them under, and how their stored outputs read (the native plugin
stores camelCase property names, as every Pulumi schema does; a dynamic resource its own snake
case). Tests of what only one host does live in files named for it (test_dynamic_host.py,
test_native_host.py, ...).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pulumi import automation as auto

from testkit.pulumi_env import PulumiEnv, native_pulumi_env
from testkit.sim import SimulatorProcess
from tests.clusters import CLUSTER_TYPE, cluster_stack
from tests.native import CLUSTER_TOKEN, VOLUME_TOKEN
from together_provider.volume.table import VOLUME_TYPE

HostName = Literal["dynamic", "native"]
CLUSTER_PROGRAM = "cluster"  # config `host: native` switches both to the plugin
VOLUMES_PROGRAM = "volumes"


@dataclass(frozen=True)
class Host:
    name: HostName
    cluster_type: str
    volume_type: str

    def env(self, root: Path, engine: Path) -> PulumiEnv:
        """A fresh isolated environment this host's programs run in."""
        if self.name == "native":
            return native_pulumi_env(root, engine)
        return PulumiEnv(root=root, bin_dir=engine)

    def cluster_stack(
        self, env: PulumiEnv, sim: SimulatorProcess, clusters: dict[str, dict[str, Any]]
    ) -> auto.Stack:
        """A stack of this host's cluster program declaring `clusters` (name -> args)."""
        return cluster_stack(env, sim, clusters, program=CLUSTER_PROGRAM, host=self.name)[0]

    def volume_stack(
        self,
        env: PulumiEnv,
        sim: SimulatorProcess,
        volumes: dict[str, Any],
        clusters: dict[str, Any] | None = None,
    ) -> auto.Stack:
        """A stack of the volumes program: `volumes`, and `clusters` that may attach them."""
        stack = cluster_stack(env, sim, clusters or {}, program=VOLUMES_PROGRAM, host=self.name)[0]
        stack.set_config("volumes", auto.ConfigValue(json.dumps(volumes)))
        return stack

    def cluster_work(self, env: PulumiEnv) -> Path:
        return env.root / "projects" / CLUSTER_PROGRAM

    def volume_work(self, env: PulumiEnv) -> Path:
        return env.root / "projects" / VOLUMES_PROGRAM

    def stored_clusters(self, env: PulumiEnv, work: Path | None = None) -> list[dict[str, Any]]:
        """The stored outputs of every cluster (what refresh updates), in snake case."""
        return self._stored(env, work or self.cluster_work(env), self.cluster_type)

    def stored_volumes(self, env: PulumiEnv) -> list[dict[str, Any]]:
        """The stored outputs of every volume of the volumes program, in snake case."""
        return self._stored(env, self.volume_work(env), self.volume_type)

    def _stored(self, env: PulumiEnv, work: Path, type_: str) -> list[dict[str, Any]]:
        return [
            {_snake(key): value for key, value in outputs.items()}
            for outputs in env.resource_outputs(work, type_)
        ]


def _snake(name: str) -> str:
    """`numPreemptibleGpus` -> `num_preemptible_gpus` (snake case stays as it is)."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", lambda m: "_" + m.group(1).lower(), name)


HOSTS: dict[HostName, Host] = {
    "dynamic": Host("dynamic", CLUSTER_TYPE, VOLUME_TYPE),
    "native": Host("native", CLUSTER_TOKEN, VOLUME_TOKEN),
}
