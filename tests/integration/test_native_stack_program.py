"""The repo's stack-config program on the native plugin, switched by one config key (`host`), and
the way a stack's existing clusters move from the dynamic host to the native one."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from pulumi import automation as auto

from testkit.pulumi_env import REPO, PulumiEnv
from testkit.sim import SimulatorProcess
from tests.clusters import live_clusters
from tests.native import CLUSTER_TOKEN
from together_provider.cluster_schema import CLUSTER_TYPE

pytestmark = [
    pytest.mark.engine,
    pytest.mark.parametrize("simulator", [{"time_scale": 600}], indirect=True),
]
DEMO_PASSPHRASE = "demo-passphrase"  # the committed stack files' salts belong to it


@pytest.fixture
def program(tmp_path: Path, native_env: PulumiEnv, simulator: SimulatorProcess) -> Path:
    source = tmp_path / "source"
    source.mkdir()
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(REPO / name, source / name)
    shutil.copytree(REPO / "stacks", source / "stacks")
    native_env.extra_env.update(
        {
            "PULUMI_CONFIG_PASSPHRASE": DEMO_PASSPHRASE,
            "TOGETHER_API_KEY": simulator.api_key,
            "TOGETHER_BASE_URL": simulator.base_url,
        }
    )
    return native_env.project(source, name="together-gpu-clusters")


def _types(env: PulumiEnv, work: Path, stack: str) -> list[str]:
    resources = env.exported_state(work, stack)["deployment"].get("resources") or []
    return [r["type"] for r in resources if r["type"] in (CLUSTER_TOKEN, CLUSTER_TYPE)]


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
    assert _types(native_env, program, "dev") == [CLUSTER_TOKEN]


def test_moving_a_stack_to_the_native_host_keeps_its_clusters(
    native_env: PulumiEnv, simulator: SimulatorProcess, program: Path
) -> None:
    dev = native_env.stack(program, "dev")
    cluster_id = dev.up().outputs["train"].value["cluster_id"]
    # A plain switch would be a new resource: the duplicate-name guard refuses it, nothing moves.
    dev.set_config("host", auto.ConfigValue("native"))
    with pytest.raises(auto.CommandError, match="already exists"):
        dev.up()
    assert [c.cluster_id for c in live_clusters(simulator)] == [cluster_id]
    # The README's steps: forget the dynamic resource, import the cluster as a native one.
    urn = next(
        r["urn"]
        for r in native_env.exported_state(program, "dev")["deployment"]["resources"]
        if r["type"] == CLUSTER_TYPE
    )
    native_env.run(program, "state", "delete", urn, "--yes", "--stack", "dev")
    native_env.run(
        program, "import", CLUSTER_TOKEN, "train", cluster_id,
        "--yes", "--generate-code=false", "--protect=false", "--stack", "dev",
    )  # fmt: skip
    # Together reports everything but `volume_region` (its volume object has no region): the
    # first up records that provider-only input, with no API call; then nothing changes.
    calls = len(simulator.requests())
    assert dev.up().summary.resource_changes == {"same": 2, "update": 1}
    assert not [r for r in simulator.requests()[calls:] if r["method"] != "GET"]
    assert dev.preview().change_summary == {auto.OpType.SAME: 3}
    assert _types(native_env, program, "dev") == [CLUSTER_TOKEN]
    assert [c.cluster_id for c in live_clusters(simulator)] == [cluster_id]
