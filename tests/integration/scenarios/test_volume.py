"""The SharedVolume resource through the real Pulumi engine against the simulator, on both hosts
(`host` fixture: dynamic, native), one behaviour each: created with the cluster that attaches
it, grown in place, a shrink refused at preview."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pulumi import automation as auto

from testkit.pulumi_env import PulumiEnv
from testkit.sim import SimulatorProcess
from tests.clusters import fails, live_clusters, preview_error, set_clusters, together_client
from tests.hosts import Host
from tests.specs import CKPT, CLUSTER_SPEC, TRAIN
from together_api.wire import VolumeCreateRequest
from together_facts.errors import NotFoundError

FAST = {"time_scale": 600, "api_key": "sk-test-volumes-7c2d"}
pytestmark = [pytest.mark.engine, pytest.mark.parametrize("simulator", [FAST], indirect=True)]

VOLUMES_PATH = "/v1/compute/clusters/storage/volumes"
ONE_VOLUME = f"{VOLUMES_PATH}/{{volume_id}}"
ONE_CLUSTER = "/v1/compute/clusters/{cluster_id}"


def _set_volumes(stack: auto.Stack, volumes: dict[str, Any]) -> None:
    stack.set_config("volumes", auto.ConfigValue(json.dumps(volumes)))


def _set(stack: auto.Stack, volumes: dict[str, Any], clusters: dict[str, Any]) -> None:
    _set_volumes(stack, volumes)
    set_clusters(stack, clusters)


def _calls(sim: SimulatorProcess) -> list[tuple[str, str]]:
    return [(r["method"], r["path"]) for r in sim.requests()]


def _types(host: Host, env: PulumiEnv) -> list[str]:
    """Our resources' types in the state, sorted."""
    state = env.exported_state(host.volume_work(env))["deployment"]
    ours = (host.cluster_type, host.volume_type)
    return sorted(r["type"] for r in state.get("resources") or [] if r["type"] in ours)


def test_a_volume_and_the_cluster_that_uses_it_in_one_up(
    host: Host, env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    outputs = host.volume_stack(env, simulator, {"ckpt": CKPT}, {"train": TRAIN}).up().outputs
    volume_id = outputs["ckpt_volume_id"].value
    calls = _calls(simulator)
    # The engine orders them: the volume is created (and available) before the cluster's POST.
    assert calls.index(("POST", VOLUMES_PATH)) < calls.index(("POST", "/v1/compute/clusters"))
    (cluster,) = live_clusters(simulator)
    assert [v.volume_id for v in cluster.volumes] == [volume_id]
    assert outputs["train_volume_name"].value == "ckpt"  # the PersistentVolume's name
    assert outputs["ckpt_size_tib"].value == 2
    assert type(outputs["ckpt_size_tib"].value) is int
    assert _types(host, env) == sorted([host.cluster_type, host.volume_type])
    with together_client(simulator) as client:
        assert client.get_volume(volume_id).status == "bound"  # the cluster is Ready


def test_growing_a_volume_is_exactly_one_put_and_leaves_its_cluster_alone(
    host: Host, env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    stack = host.volume_stack(env, simulator, {"ckpt": CKPT}, {"train": TRAIN})
    first = stack.up().outputs
    _set_volumes(stack, {"ckpt": {**CKPT, "size_tib": 6}})
    simulator.reset_requests()
    assert stack.preview().change_summary == {auto.OpType.UPDATE: 1, auto.OpType.SAME: 2}
    assert simulator.requests() == []  # preview is check + diff only
    result = stack.up()
    # The cluster that attaches it is untouched: no replacement, no call.
    assert result.summary.resource_changes == {"update": 1, "same": 2}
    assert [(r["method"], r["path"], r["status"]) for r in simulator.requests()] == [
        ("PUT", VOLUMES_PATH, 200)
    ]
    volume_id = first["ckpt_volume_id"].value
    assert result.outputs["ckpt_volume_id"].value == volume_id
    assert result.outputs["train_id"].value == first["train_id"].value
    assert result.outputs["ckpt_size_tib"].value == 6
    with together_client(simulator) as client:
        assert client.get_volume(volume_id).size_tib == 6


def test_a_shrink_fails_at_preview_and_so_does_undoing_a_grow_made_elsewhere(
    host: Host, env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    stack = host.volume_stack(env, simulator, {"ckpt": {**CKPT, "size_tib": 4}})
    stack.up()
    _set_volumes(stack, {"ckpt": {**CKPT, "size_tib": 2}})
    simulator.reset_requests()
    error = preview_error(stack)
    assert "volume 'ckpt': size_tib 4 -> 2 would shrink the volume" in error
    assert "Together volumes only grow" in error
    assert "Traceback" not in error
    assert simulator.requests() == []
    # Someone grows it elsewhere (`tg clusters storage`): refresh shows the drift ...
    volume_id = stack.outputs()["ckpt_volume_id"].value
    with together_client(simulator) as client:
        client.resize_volume(volume_id, 5)
    refresh = stack.refresh()
    assert refresh.summary.resource_changes == {"update": 1, "same": 1}
    assert [v["size_tib"] for v in host.stored_volumes(env)] == [5]
    # ... and the stack's 2 TiB would now shrink the live volume, so it is refused too.
    assert "size_tib 5 -> 2 would shrink the volume" in preview_error(stack)


def test_a_volume_its_cluster_still_uses_is_not_deleted_and_destroy_deletes_the_cluster_first(
    host: Host, env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    stack = host.volume_stack(env, simulator, {"ckpt": CKPT}, {"train": TRAIN})
    outputs = stack.up().outputs
    volume_id, cluster_id = outputs["ckpt_volume_id"].value, outputs["train_id"].value
    # The program drops the volume but the cluster keeps naming it (by its id, as a literal).
    kept = {**CLUSTER_SPEC, "volume_id": volume_id, "volume_region": CKPT["region"]}
    _set(stack, {}, {"train": kept})
    simulator.reset_requests()
    message = fails(stack.up)
    assert f"volume 'ckpt' ({volume_id}) is attached to cluster 'train' ({cluster_id}" in message
    assert "nothing was deleted" in message
    assert all(method == "GET" for method, _ in _calls(simulator))  # no DELETE was sent
    with together_client(simulator) as client:
        assert client.get_volume(volume_id).status == "bound"
        assert client.get_cluster(cluster_id).status == "Ready"
    assert [v["volume_id"] for v in host.stored_volumes(env)] == [volume_id]  # still in state
    # Back in the program, attached by reference again: nothing changes, and the engine knows
    # the cluster depends on the volume. Destroying the stack deletes the cluster, then it.
    _set(stack, {"ckpt": CKPT}, {"train": TRAIN})
    assert stack.up().summary.resource_changes == {"same": 3}
    simulator.reset_requests()
    stack.destroy()
    deletes = [path for method, path in _calls(simulator) if method == "DELETE"]
    assert deletes == [ONE_CLUSTER, ONE_VOLUME]
    assert live_clusters(simulator) == []
    with together_client(simulator) as client, pytest.raises(NotFoundError):
        client.get_volume(volume_id)


def test_a_volume_in_another_region_fails_at_preview(
    host: Host, env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    elsewhere = {**CKPT, "region": "us-west-2"}
    stack = host.volume_stack(env, simulator, {"ckpt": elsewhere}, {"train": TRAIN})
    error = preview_error(stack)
    assert "cluster 'train': volume_region='us-west-2' differs from region='us-central-8'" in error
    assert simulator.requests() == []


def test_adopts_an_existing_volume_and_grows_it(
    host: Host, env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    with together_client(simulator) as client:
        existing = client.create_volume(
            VolumeCreateRequest(volume_name="ckpt", size_tib=1, region="us-central-8")
        )
    simulator.advance(120)
    adopt = {**CKPT, "adopt_volume_id": existing.volume_id}
    stack = host.volume_stack(env, simulator, {"ckpt": adopt})
    simulator.reset_requests()
    outputs = stack.up().outputs
    assert outputs["ckpt_volume_id"].value == existing.volume_id
    assert ("POST", VOLUMES_PATH) not in _calls(simulator)
    with together_client(simulator) as client:
        assert client.get_volume(existing.volume_id).size_tib == 2
