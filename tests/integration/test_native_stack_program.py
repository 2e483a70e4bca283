"""The repo's stack-config program on the native plugin, switched by one config key (`host`), and
the way a stack's existing clusters and volumes move from the dynamic host to the native one."""

from __future__ import annotations

from pathlib import Path

import pytest
from pulumi import automation as auto

from testkit.pulumi_env import PulumiEnv
from testkit.sim import SimulatorProcess
from tests.clusters import FAST_SIMULATOR, live_clusters, repo_program
from tests.native import CLUSTER_TOKEN, VOLUME_TOKEN
from together_provider.cluster.table import CLUSTER_TYPE
from together_provider.volume.table import VOLUME_TYPE

pytestmark = [pytest.mark.engine, FAST_SIMULATOR]


@pytest.fixture
def program(tmp_path: Path, native_env: PulumiEnv, simulator: SimulatorProcess) -> Path:
    return repo_program(native_env, simulator, tmp_path / "source")


def _types(env: PulumiEnv, work: Path, stack: str) -> list[str]:
    resources = env.exported_state(work, stack)["deployment"].get("resources") or []
    ours = (CLUSTER_TOKEN, CLUSTER_TYPE, VOLUME_TOKEN, VOLUME_TYPE)
    return [r["type"] for r in resources if r["type"] in ours]


def test_host_native_runs_the_stack_on_the_plugin(
    native_env: PulumiEnv, simulator: SimulatorProcess, program: Path
) -> None:
    dev = native_env.stack(program, "dev")
    dev.set_config("host", auto.ConfigValue("native"))
    train = dev.up().outputs["train"].value
    assert (train["status"], train["standard_gpus"], train["preemptible_target"]) == (
        "Ready",
        8,
        16,
    )
    assert _types(native_env, program, "dev") == [VOLUME_TOKEN, CLUSTER_TOKEN]


def test_moving_a_stack_to_the_native_host_keeps_its_clusters_and_volumes(
    native_env: PulumiEnv, simulator: SimulatorProcess, program: Path
) -> None:
    dev = native_env.stack(program, "dev")
    outputs = dev.up().outputs
    cluster_id = outputs["train"].value["cluster_id"]
    volume_id = outputs["volume_checkpoints"].value["volume_id"]
    # The README's steps: switch, forget the dynamic resources, import them as native ones.
    dev.set_config("host", auto.ConfigValue("native"))
    for urn in reversed(_urns(native_env, program, (CLUSTER_TYPE, VOLUME_TYPE))):  # users first
        native_env.run(program, "state", "delete", urn, "--yes", "--stack", "dev")
    for token, name, id_ in (
        (VOLUME_TOKEN, "checkpoints", volume_id),
        (CLUSTER_TOKEN, "train", cluster_id),
    ):
        native_env.run(
            program, "import", token, name, id_,
            "--yes", "--generate-code=false", "--protect=false", "--stack", "dev",
        )  # fmt: skip
    assert dev.preview().change_summary == {auto.OpType.SAME: 3}
    assert _types(native_env, program, "dev") == [VOLUME_TOKEN, CLUSTER_TOKEN]
    assert [c.cluster_id for c in live_clusters(simulator)] == [cluster_id]
    assert dev.up().outputs["volume_checkpoints"].value["volume_id"] == volume_id


def _urns(env: PulumiEnv, work: Path, types: tuple[str, ...]) -> list[str]:
    resources = env.exported_state(work, "dev")["deployment"]["resources"]
    return [r["urn"] for r in resources if r["type"] in types]
