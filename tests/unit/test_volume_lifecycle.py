"""The Pulumi-free volume lifecycle against a scripted Together API: what any host gets."""

from __future__ import annotations

from typing import Any

import pytest
from pytest_mock import MockerFixture

from tests.fake_api import CLUSTERS, FakeApi, client_for, cluster, reply
from together_facts.errors import SpecError, VolumeInUseError
from together_provider.framework.schema import Schema
from together_provider.volume.lifecycle import VolumeLifecycle
from together_provider.volume.table import VOLUME

VOLUMES = "/v1/compute/clusters/storage/volumes"
ONE = f"{VOLUMES}/vol-1"
PROPS: dict[str, Any] = {"volume_name": "ckpt", "region": "us-central-8", "size_tib": 2.0}
NONE: dict[str, list[object]] = {"clusters": []}


def volume(status: str = "available", size: int = 2, name: str = "ckpt") -> dict[str, Any]:
    return {"volume_id": "vol-1", "volume_name": name, "size_tib": size, "status": status}


def using(status: str = "Ready") -> dict[str, Any]:
    return {"clusters": [cluster(status, volumes=[{"volume_id": "vol-1"}])]}


def lifecycle(api: FakeApi) -> VolumeLifecycle:
    return VolumeLifecycle(client_for(api))


def test_create_posts_then_waits_until_available() -> None:
    api = FakeApi()
    api.on("POST", VOLUMES, reply(200, volume("provisioning")))
    api.on("GET", ONE, reply(200, volume("provisioning")), reply(200, volume()))
    applied = lifecycle(api).create(VOLUME.resolve(PROPS))
    assert applied.id == "vol-1"
    assert applied.outputs["status"] == "available"
    assert applied.outputs["size_tib"] == 2 and applied.outputs["cluster_ids"] == []
    assert api.seen == [("POST", VOLUMES), ("GET", ONE), ("GET", ONE)]


def test_growing_is_exactly_one_put() -> None:
    api = FakeApi()
    api.on("PUT", VOLUMES, reply(200, volume(size=6)))
    old = {**PROPS, "volume_id": "vol-1", "status": "available", "cluster_ids": []}
    new = VOLUME.resolve({**PROPS, "size_tib": 6.0})
    applied = lifecycle(api).update("vol-1", VOLUME.stored(old), new)
    assert api.seen == [("PUT", VOLUMES)]
    assert applied.outputs["size_tib"] == 6 and applied.outputs["volume_id"] == "vol-1"


def test_delete_is_refused_while_a_live_cluster_uses_it_and_names_the_cluster() -> None:
    api = FakeApi()
    api.on("GET", CLUSTERS, reply(200, using()))
    with pytest.raises(VolumeInUseError) as refused:
        lifecycle(api).delete("vol-1", VOLUME.stored(PROPS))
    assert "volume 'ckpt' (vol-1) is attached to cluster 'train' (c-1, Ready)" in str(refused.value)
    assert "delete or replace cluster 'train' first" in str(refused.value)
    assert ("DELETE", ONE) not in api.seen


def test_delete_waits_out_a_deleting_cluster_then_waits_for_the_404() -> None:
    api = FakeApi()
    api.on("GET", CLUSTERS, reply(200, using("Deleting")), reply(200, NONE))
    api.on("DELETE", ONE, reply(200, {"success": True}))
    api.on("GET", ONE, reply(200, volume("deleting")), reply(404, {"error": {"message": "gone"}}))
    lifecycle(api).delete("vol-1", VOLUME.stored(PROPS))
    assert api.seen == [
        ("GET", CLUSTERS),
        ("GET", CLUSTERS),
        ("DELETE", ONE),
        ("GET", ONE),
        ("GET", ONE),
    ]


def test_read_shows_an_out_of_band_resize_as_drift() -> None:
    api = FakeApi()
    api.on("GET", ONE, reply(200, volume("bound", size=5)))
    api.on("GET", CLUSTERS, reply(200, using()))
    observed = lifecycle(api).read("vol-1", VOLUME.stored({**PROPS, "size_tib": 2}))
    assert observed is not None
    assert observed.inputs["size_tib"] == 5
    assert observed.outputs["cluster_ids"] == ["c-1"]


@pytest.mark.parametrize(
    "answer", [reply(200, volume("deleting")), reply(404, {"error": {"message": "gone"}})]
)
def test_read_takes_a_deleting_or_missing_volume_as_gone(answer: Any) -> None:
    api = FakeApi()
    api.on("GET", ONE, answer)
    assert lifecycle(api).read("vol-1", VOLUME.stored(PROPS)) is None
    assert api.seen == [("GET", ONE)]  # gone: no need to ask which clusters use it


def test_adoption_refuses_another_name_and_grows_a_smaller_volume(mocker: MockerFixture) -> None:
    api = FakeApi()
    api.on("GET", ONE, reply(200, volume(name="other")))
    api.on("GET", CLUSTERS, reply(200, NONE))
    with pytest.raises(SpecError, match="volume_name: volume has 'other', spec has 'ckpt'"):
        lifecycle(api).create(VOLUME.resolve({**PROPS, "adopt_volume_id": "vol-1"}))

    api = FakeApi()
    api.on("GET", ONE, reply(200, volume(size=1)))
    api.on("GET", CLUSTERS, reply(200, NONE))
    api.on("PUT", VOLUMES, reply(200, volume(size=2)))
    parses = mocker.spy(Schema, "parse")
    applied = lifecycle(api).create(VOLUME.resolve({**PROPS, "adopt_volume_id": "vol-1"}))
    assert applied.id == "vol-1" and ("POST", VOLUMES) not in api.seen
    assert api.seen.count(("PUT", VOLUMES)) == 1
    assert parses.call_count == 1  # the host's resolve: adoption's rules read the parsed spec


def test_adoption_refuses_a_larger_live_volume_as_a_shrink() -> None:
    api = FakeApi()
    api.on("GET", ONE, reply(200, volume(size=8)))
    api.on("GET", CLUSTERS, reply(200, NONE))
    with pytest.raises(SpecError, match="size_tib 8 -> 2 would shrink the volume"):
        lifecycle(api).create(VOLUME.resolve({**PROPS, "adopt_volume_id": "vol-1"}))
    assert ("PUT", VOLUMES) not in api.seen


def test_the_update_plan_asks_the_volume_rules_over_the_parsed_state() -> None:
    old = VOLUME.stored({**PROPS, "__provider": "x", "status": "available"})
    assert old.outputs == {"status": "available"}
    plan = VolumeLifecycle.RULEBOOK.plan_drafts(
        old.inputs, VOLUME.resolve({**PROPS, "size_tib": 3})
    )
    assert (plan.changed, plan.update, plan.replaces) == (("size_tib",), {"size_tib": 3}, ())
