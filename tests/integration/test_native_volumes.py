"""The native plugin's `together:index:SharedVolume` through the real engine against the
simulator, one behaviour each: created with the cluster that attaches it, grown in place, a
shrink refused at preview, and `pulumi import` of an existing volume."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pulumi import automation as auto

from testkit.pulumi_env import PulumiEnv
from testkit.sim import SimulatorProcess
from tests.clusters import cluster_stack, live_clusters, preview_error
from tests.native import CLUSTER_TOKEN, VOLUME_TOKEN
from tests.specs import CLUSTER_SPEC
from together_api.client import TogetherClient
from together_api.wire import VolumeCreateRequest

FAST = {"time_scale": 600}  # 6 simulated minutes of provisioning = 0.6 s
pytestmark = [pytest.mark.engine, pytest.mark.parametrize("simulator", [FAST], indirect=True)]

PROGRAM = "volumes"  # the dynamic volume tests' program, with `host: native`
VOLUMES_PATH = "/v1/compute/clusters/storage/volumes"
CKPT: dict[str, Any] = {"region": "us-central-8", "size_tib": 2, "project_id": "proj-test"}
TRAIN: dict[str, Any] = {**CLUSTER_SPEC, "volume": "ckpt"}


def _set_volumes(stack: auto.Stack, volumes: dict[str, Any]) -> None:
    stack.set_config("volumes", auto.ConfigValue(json.dumps(volumes)))


def _stack(
    env: PulumiEnv,
    sim: SimulatorProcess,
    volumes: dict[str, Any],
    clusters: dict[str, Any] | None = None,
) -> auto.Stack:
    stack, _ = cluster_stack(env, sim, clusters or {}, program=PROGRAM)
    stack.set_config("host", auto.ConfigValue("native"))
    _set_volumes(stack, volumes)
    return stack


def _types(env: PulumiEnv) -> list[str]:
    state = env.exported_state(env.root / "projects" / PROGRAM)["deployment"]
    return sorted(
        r["type"] for r in state.get("resources") or [] if r["type"].startswith("together:")
    )


def _calls(sim: SimulatorProcess) -> list[tuple[str, str]]:
    return [(r["method"], r["path"]) for r in sim.requests()]


def test_a_volume_and_the_cluster_that_uses_it_in_one_up(
    native_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    outputs = _stack(native_env, simulator, {"ckpt": CKPT}, {"train": TRAIN}).up().outputs
    volume_id = outputs["ckpt_volume_id"].value
    calls = _calls(simulator)
    # The engine orders them: the volume is created (and available) before the cluster's POST.
    assert calls.index(("POST", VOLUMES_PATH)) < calls.index(("POST", "/v1/compute/clusters"))
    (cluster,) = live_clusters(simulator)
    assert [v.volume_id for v in cluster.volumes] == [volume_id]
    assert outputs["ckpt_size_tib"].value == 2
    assert type(outputs["ckpt_size_tib"].value) is int
    assert _types(native_env) == [CLUSTER_TOKEN, VOLUME_TOKEN]  # both on the native plugin
    with TogetherClient(api_key=simulator.api_key, base_url=simulator.base_url) as client:
        assert client.get_volume(volume_id).status == "bound"  # the cluster is Ready


def test_growing_a_volume_is_exactly_one_put_and_leaves_its_cluster_alone(
    native_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    stack = _stack(native_env, simulator, {"ckpt": CKPT}, {"train": TRAIN})
    first = stack.up().outputs
    _set_volumes(stack, {"ckpt": {**CKPT, "size_tib": 6}})
    simulator.reset_requests()
    assert stack.preview().change_summary == {auto.OpType.UPDATE: 1, auto.OpType.SAME: 2}
    assert simulator.requests() == []  # preview is check + diff only
    result = stack.up()
    assert result.summary.resource_changes == {"update": 1, "same": 2}
    assert [(r["method"], r["path"], r["status"]) for r in simulator.requests()] == [
        ("PUT", VOLUMES_PATH, 200)
    ]
    assert result.outputs["ckpt_volume_id"].value == first["ckpt_volume_id"].value
    assert result.outputs["train_id"].value == first["train_id"].value
    assert result.outputs["ckpt_size_tib"].value == 6


def test_a_shrink_fails_at_preview_with_our_sentence_and_no_api_call(
    native_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    stack = _stack(native_env, simulator, {"ckpt": {**CKPT, "size_tib": 4}})
    stack.up()
    _set_volumes(stack, {"ckpt": {**CKPT, "size_tib": 2}})
    simulator.reset_requests()
    error = preview_error(stack)
    assert "volume 'ckpt': size_tib 4 -> 2 would shrink the volume" in error
    assert "Together volumes only grow" in error
    assert "Traceback" not in error
    assert simulator.requests() == []


def test_import_of_a_volume_then_the_matching_program_previews_no_changes(
    native_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    with TogetherClient(api_key=simulator.api_key, base_url=simulator.base_url) as client:
        existing = client.create_volume(
            VolumeCreateRequest(
                volume_name="ckpt", size_tib=2, region="us-central-8", project_id="proj-test"
            )
        )
    simulator.advance(120)
    stack = _stack(native_env, simulator, {"ckpt": CKPT})
    simulator.reset_requests()
    imported = native_env.run(
        native_env.root / "projects" / PROGRAM, "import", VOLUME_TOKEN, "ckpt",
        existing.volume_id, "--yes", "--generate-code=false", "--stack", "test",
    )  # fmt: skip
    assert "1 imported" in imported.stdout, imported.stdout + imported.stderr
    assert {method for method, _ in _calls(simulator)} == {"GET"}  # import only reads
    # Together does not report a volume's region or project: the program's are taken, not
    # shown as a replacement.
    assert stack.preview().change_summary == {auto.OpType.SAME: 2}
    result = stack.up()
    assert result.summary.resource_changes == {"same": 2}
    assert result.outputs["ckpt_volume_id"].value == existing.volume_id
    # The first real change is an ordinary in-place grow of the imported volume.
    _set_volumes(stack, {"ckpt": {**CKPT, "size_tib": 3}})
    simulator.reset_requests()
    assert stack.up().summary.resource_changes == {"update": 1, "same": 1}
    assert [(r["method"], r["path"]) for r in simulator.requests()] == [("PUT", VOLUMES_PATH)]
    (stored,) = native_env.resource_outputs(native_env.root / "projects" / PROGRAM, VOLUME_TOKEN)
    assert (stored["region"], stored["projectId"]) == ("us-central-8", "proj-test")
    assert "__unread" not in stored  # the update stored the program's values
