"""The repo's own program and stack files through the real engine, against the simulator."""

from __future__ import annotations

from pathlib import Path

import pytest
from pulumi import automation as auto

from testkit.pulumi_env import PulumiEnv
from testkit.sim import SimulatorProcess
from tests.clusters import FAST_SIMULATOR, preview_error, repo_program
from together_api.client import TogetherClient

pytestmark = [pytest.mark.engine, FAST_SIMULATOR]


@pytest.fixture
def program(tmp_path: Path, pulumi_env: PulumiEnv, simulator: SimulatorProcess) -> Path:
    return repo_program(pulumi_env, simulator, tmp_path / "source")


def test_an_up_on_one_stack_never_touches_another_stacks_clusters(
    pulumi_env: PulumiEnv, simulator: SimulatorProcess, program: Path
) -> None:
    dev = pulumi_env.stack(program, "dev")
    staging = pulumi_env.stack(program, "staging")
    dev_id = dev.up().outputs["train"].value["cluster_id"]
    staging_id = staging.up().outputs["train"].value["cluster_id"]
    assert dev_id != staging_id

    dev.set_config("clusters.train.numPreemptibleGpus", auto.ConfigValue("24"), path=True)
    simulator.reset_requests()
    dev.up()
    touched = {r["path"] for r in simulator.requests()}
    assert touched == {"/v1/compute/clusters/{cluster_id}"}  # one PUT, to dev's cluster
    with TogetherClient(api_key=simulator.api_key, base_url=simulator.base_url) as client:
        assert client.get_cluster(staging_id).desired_preemptible_gpus == 32
        assert client.get_cluster(dev_id).desired_preemptible_gpus == 24
    assert staging.preview().change_summary == {auto.OpType.SAME: 2}


def test_a_bad_stack_config_fails_at_preview_with_every_problem_and_no_api_call(
    pulumi_env: PulumiEnv, simulator: SimulatorProcess, program: Path
) -> None:
    prod = pulumi_env.stack(program, "prod")
    prod.set_config("clusters.train.numGpus", auto.ConfigValue("12"), path=True)
    prod.set_config("clusters.serve.numGpu", auto.ConfigValue("8"), path=True)
    prod.set_config("defualts", auto.ConfigValue("{}"))
    message = preview_error(prod)
    assert "the stack config has 3 problem(s)" in message
    assert "defualts: unknown key; did you mean 'defaults'?" in message
    assert "clusters.train.numGpus: num_gpus=12 is not a multiple of 8" in message
    assert "clusters.serve.numGpu: unknown key; did you mean 'numGpus'?" in message
    assert "Traceback" not in message
    assert simulator.requests() == []
