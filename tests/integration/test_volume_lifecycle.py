"""The SharedVolume resource through the real Pulumi engine against the simulator, one behaviour
each: created with the cluster that attaches it, grown in place, protected while attached."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pulumi import automation as auto

from testkit.pulumi_env import PulumiEnv, Secret
from testkit.sim import SimulatorProcess
from tests.clusters import live_clusters, preview_error
from tests.integration.conftest import PROGRAMS
from tests.specs import CLUSTER_SPEC
from together_api.client import TogetherClient
from together_api.errors import NotFoundError
from together_api.wire import VolumeCreateRequest
from together_provider.volume.schema import VOLUME_TYPE

API_KEY = "sk-test-volumes-7c2d"
FAST = {"time_scale": 600, "api_key": API_KEY}
pytestmark = [pytest.mark.engine, pytest.mark.parametrize("simulator", [FAST], indirect=True)]

VOLUMES_PATH = "/v1/compute/clusters/storage/volumes"
ONE_VOLUME = f"{VOLUMES_PATH}/{{volume_id}}"
ONE_CLUSTER = "/v1/compute/clusters/{cluster_id}"
CKPT: dict[str, Any] = {"region": "us-central-8", "size_tib": 2, "project_id": "proj-test"}
TRAIN: dict[str, Any] = {**CLUSTER_SPEC, "volume": "ckpt"}


def _stack(
    env: PulumiEnv,
    sim: SimulatorProcess,
    volumes: dict[str, Any],
    clusters: dict[str, Any] | None = None,
) -> auto.Stack:
    work = env.root / "projects" / "volumes"
    if not work.exists():
        work = env.project(PROGRAMS / "volumes")
    return env.stack(
        work,
        config={
            "volumes": json.dumps(volumes),
            "clusters": json.dumps(clusters or {}),
            "together:apiKey": Secret(sim.api_key),
            "together:baseUrl": sim.base_url,
        },
    )


def _set(
    stack: auto.Stack, volumes: dict[str, Any], clusters: dict[str, Any] | None = None
) -> None:
    stack.set_config("volumes", auto.ConfigValue(json.dumps(volumes)))
    stack.set_config("clusters", auto.ConfigValue(json.dumps(clusters or {})))


def _client(sim: SimulatorProcess) -> TogetherClient:
    return TogetherClient(api_key=sim.api_key, base_url=sim.base_url)


def _stored_volume(env: PulumiEnv) -> dict[str, Any]:
    (outputs,) = env.resource_outputs(env.root / "projects" / "volumes", VOLUME_TYPE)
    return outputs


def _calls(sim: SimulatorProcess) -> list[tuple[str, str]]:
    return [(r["method"], r["path"]) for r in sim.requests()]


def test_a_volume_and_the_cluster_that_uses_it_in_one_up(
    pulumi_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    outputs = _stack(pulumi_env, simulator, {"ckpt": CKPT}, {"train": TRAIN}).up().outputs
    volume_id = outputs["ckpt_volume_id"].value
    calls = _calls(simulator)
    # The engine orders them: the volume is created (and available) before the cluster's POST.
    assert calls.index(("POST", VOLUMES_PATH)) < calls.index(("POST", "/v1/compute/clusters"))
    (cluster,) = live_clusters(simulator)
    assert [v.volume_id for v in cluster.volumes] == [volume_id]
    assert outputs["train_volume_name"].value == "ckpt"  # the PersistentVolume's name
    with _client(simulator) as client:
        assert client.get_volume(volume_id).status == "bound"  # the cluster is Ready


def test_growing_a_volume_is_exactly_one_put(
    pulumi_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    stack = _stack(pulumi_env, simulator, {"ckpt": CKPT}, {"train": TRAIN})
    volume_id = stack.up().outputs["ckpt_volume_id"].value
    _set(stack, {"ckpt": {**CKPT, "size_tib": 6}}, {"train": TRAIN})
    simulator.reset_requests()
    result = stack.up()
    # The cluster that attaches it is untouched: no replacement, no call.
    assert result.summary.resource_changes == {"update": 1, "same": 2}
    assert [(r["method"], r["path"], r["status"]) for r in simulator.requests()] == [
        ("PUT", VOLUMES_PATH, 200)
    ]
    assert result.outputs["ckpt_volume_id"].value == volume_id
    with _client(simulator) as client:
        assert client.get_volume(volume_id).size_tib == 6


def test_a_shrink_fails_at_preview_with_no_api_call(
    pulumi_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    stack = _stack(pulumi_env, simulator, {"ckpt": {**CKPT, "size_tib": 4}})
    stack.up()
    _set(stack, {"ckpt": {**CKPT, "size_tib": 2}})
    simulator.reset_requests()
    error = preview_error(stack)
    assert "volume 'ckpt': size_tib 4 -> 2 would shrink the volume" in error
    assert "Together volumes only grow" in error
    assert simulator.requests() == []


def test_destroying_a_volume_its_cluster_still_uses_fails_naming_the_cluster(
    pulumi_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    stack = _stack(pulumi_env, simulator, {"ckpt": CKPT}, {"train": TRAIN})
    outputs = stack.up().outputs
    volume_id, cluster_id = outputs["ckpt_volume_id"].value, outputs["train_id"].value
    # The program drops the volume but the cluster keeps naming it (by its id, as a literal).
    kept = {**CLUSTER_SPEC, "volume_id": volume_id, "volume_region": CKPT["region"]}
    _set(stack, {}, {"train": kept})
    simulator.reset_requests()
    with pytest.raises(auto.CommandError) as failed:
        stack.up()
    message = str(failed.value)
    assert f"volume 'ckpt' ({volume_id}) is attached to cluster 'train' ({cluster_id}" in message
    assert "nothing was deleted" in message
    assert all(method == "GET" for method, _ in _calls(simulator))  # no DELETE was sent
    with _client(simulator) as client:
        assert client.get_volume(volume_id).status == "bound"
        assert client.get_cluster(cluster_id).status == "Ready"
    assert _stored_volume(pulumi_env)["volume_id"] == volume_id  # still in the state


def test_destroying_the_stack_deletes_the_cluster_then_the_volume(
    pulumi_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    stack = _stack(pulumi_env, simulator, {"ckpt": CKPT}, {"train": TRAIN})
    volume_id = stack.up().outputs["ckpt_volume_id"].value
    simulator.reset_requests()
    stack.destroy()
    deletes = [path for method, path in _calls(simulator) if method == "DELETE"]
    assert deletes == [ONE_CLUSTER, ONE_VOLUME]
    assert live_clusters(simulator) == []
    with _client(simulator) as client, pytest.raises(NotFoundError):
        client.get_volume(volume_id)


def test_refresh_after_an_out_of_band_resize_shows_drift(
    pulumi_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    stack = _stack(pulumi_env, simulator, {"ckpt": CKPT})
    volume_id = stack.up().outputs["ckpt_volume_id"].value
    with _client(simulator) as client:
        client.resize_volume(volume_id, 5)  # someone grew it with `tg clusters storage`
    refresh = stack.refresh()
    assert refresh.summary.resource_changes == {"update": 1, "same": 1}
    assert _stored_volume(pulumi_env)["size_tib"] == 5
    # The stack still says 2 TiB: applying it would shrink the live volume, so it is refused.
    assert "size_tib 5 -> 2 would shrink the volume" in preview_error(stack)


def test_a_volume_in_another_region_fails_at_preview(
    pulumi_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    elsewhere = {**CKPT, "region": "us-west-2"}
    stack = _stack(pulumi_env, simulator, {"ckpt": elsewhere}, {"train": TRAIN})
    error = preview_error(stack)
    assert "cluster 'train': volume_region='us-west-2' differs from region='us-central-8'" in error
    assert simulator.requests() == []


def test_adopts_an_existing_volume_and_grows_it(
    pulumi_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    with _client(simulator) as client:
        existing = client.create_volume(
            VolumeCreateRequest(volume_name="ckpt", size_tib=1, region="us-central-8")
        )
    simulator.advance(120)
    stack = _stack(pulumi_env, simulator, {"ckpt": {**CKPT, "adopt_volume_id": existing.volume_id}})
    simulator.reset_requests()
    outputs = stack.up().outputs
    assert outputs["ckpt_volume_id"].value == existing.volume_id
    assert ("POST", VOLUMES_PATH) not in _calls(simulator)
    with _client(simulator) as client:
        assert client.get_volume(existing.volume_id).size_tib == 2
