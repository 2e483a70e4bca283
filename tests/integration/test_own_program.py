"""What a new user does first: their own program, in their own directory, with no stack config
at all, credentials from the environment. It previews, ups and destroys one cluster.

(With no config the engine sends no config map; a host that passed that on as
PULUMI_CONFIG=null crashed every such program inside the SDK.)
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml
from pulumi import automation as auto

from testkit.pulumi_env import PulumiEnv
from testkit.sim import SimulatorProcess
from tests.clusters import live_clusters, state_clusters
from tests.integration.conftest import PROGRAMS

API_KEY = "sk-own-program-3c9a"
FAST = {"time_scale": 600, "api_key": API_KEY}
pytestmark = pytest.mark.engine

PROGRAM = '''\
"""My GPU cluster."""

import pulumi

from together_provider import Cluster, ClusterArgs

train = Cluster(
    "train",
    ClusterArgs(
        region="us-central-8",
        gpu_type="H100_SXM",
        num_gpus=8,
        cuda_version="12.8",
        nvidia_driver_version="570",
        project_id="proj-mine",
    ),
)
pulumi.export("cluster_id", train.cluster_id)
'''


def users_program(directory: Path) -> Path:
    """Pulumi.yaml and __main__.py, as a user writes them (their virtualenv: ours)."""
    directory.mkdir(parents=True)
    settings = {
        "name": "my-gpus",
        "runtime": {"name": "python", "options": {"toolchain": "pip", "virtualenv": sys.prefix}},
    }
    (directory / "Pulumi.yaml").write_text(yaml.safe_dump(settings, sort_keys=False))
    (directory / "__main__.py").write_text(PROGRAM)
    return directory


@pytest.mark.parametrize("simulator", [FAST], indirect=True)
def test_own_program_without_config_previews_ups_and_destroys(
    tmp_path: Path, engine: Path, simulator: SimulatorProcess
) -> None:
    env = PulumiEnv(
        root=tmp_path,
        bin_dir=engine,
        extra_env={"TOGETHER_API_KEY": API_KEY, "TOGETHER_BASE_URL": simulator.base_url},
    )
    work = users_program(tmp_path / "my-gpus")
    stack = env.stack(work, "dev")
    assert stack.get_all_config() == {}

    assert stack.preview().change_summary == {auto.OpType.CREATE: 2}
    assert live_clusters(simulator) == []

    up = stack.up()
    (cluster,) = live_clusters(simulator)
    assert up.outputs["cluster_id"].value == cluster.cluster_id
    assert state_clusters(env, work, "dev") == {"train": cluster.cluster_id}

    assert stack.destroy().summary.resource_changes == {"delete": 2}
    assert live_clusters(simulator) == []


def test_the_harness_takes_an_engine_directory_of_any_name(tmp_path: Path, engine: Path) -> None:
    """A release install keeps the CLI in e.g. ~/.pulumi/bin or /opt/pulumi: not always `bin`."""
    release = tmp_path / "pulumi-3.274"
    release.mkdir()
    for binary in engine.iterdir():
        (release / binary.name).symlink_to(binary)
    env = PulumiEnv(root=tmp_path, bin_dir=release)
    stack = env.stack(env.project(PROGRAMS / "counter"), config={"count": 1})
    assert stack.preview().change_summary == {auto.OpType.CREATE: 2}
