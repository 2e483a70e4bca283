"""Shared volumes in the simulator: lifecycle, attachment checks and binding to clusters."""

from __future__ import annotations

from typing import Any

import pytest

from tests.sim_app import BASE, REGION, Sim
from together_api.wire import Cluster, SharedVolume, VolumeList

VOLUMES = "/v1/compute/clusters/storage/volumes"


def create_volume(sim: Sim, **overrides: Any) -> SharedVolume:
    body = {"volume_name": "data", "size_tib": 2, "region": REGION, **overrides}
    response = sim.http.post(VOLUMES, json=body)
    assert response.status_code == 200, response.text
    return SharedVolume.model_validate(response.json())


def get_volume(sim: Sim, volume_id: str) -> Any:
    return sim.http.get(f"{VOLUMES}/{volume_id}")


def test_create_provisions_then_is_available_and_carries_only_the_sdk_fields(sim: Sim) -> None:
    volume = create_volume(sim)
    assert volume.status == "provisioning" and not volume.is_available
    sim.advance(60)
    body = get_volume(sim, volume.volume_id).json()
    assert body == {
        "volume_id": volume.volume_id,
        "volume_name": "data",
        "size_tib": 2,
        "status": "available",
    }


def test_list_filters_by_project(sim: Sim) -> None:
    mine = create_volume(sim, project_id="p-1")
    create_volume(sim)
    listed = VolumeList.model_validate(sim.http.get(VOLUMES, params={"projectId": "p-1"}).json())
    assert [v.volume_id for v in listed.volumes] == [mine.volume_id]
    assert len(sim.http.get(VOLUMES).json()["volumes"]) == 2


def test_resize_grows_with_the_id_in_the_body_and_never_shrinks(sim: Sim) -> None:
    volume = create_volume(sim)
    grown = sim.http.put(VOLUMES, json={"volume_id": volume.volume_id, "size_tib": 5})
    assert grown.status_code == 200 and grown.json()["size_tib"] == 5
    shrunk = sim.http.put(VOLUMES, json={"volume_id": volume.volume_id, "size_tib": 1})
    assert shrunk.status_code == 400 and shrunk.json()["error"]["param"] == "size_tib"
    missing = sim.http.put(VOLUMES, json={"volume_id": "vol-nope", "size_tib": 5})
    assert missing.status_code == 404


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"volume_name": "d", "size_tib": 1, "region": "mars-1"}, "region"),
        ({"volume_name": "d", "size_tib": 0, "region": REGION}, "size_tib"),
        ({"volume_name": " ", "size_tib": 1, "region": REGION}, "volume_name"),
        ({"volume_name": "d", "size_tib": 1}, "region"),
        ({"volume_name": "d", "size_tib": 1, "region": REGION, "instance_cluster_id": "x"}, None),
    ],
)
def test_create_validation(sim: Sim, body: dict[str, Any], param: str | None) -> None:
    response = sim.http.post(VOLUMES, json=body)
    assert response.status_code == 400, response.text
    assert response.json()["error"]["param"] == (param or "instance_cluster_id")


def test_delete_then_gone(sim: Sim) -> None:
    volume = create_volume(sim)
    response = sim.http.delete(f"{VOLUMES}/{volume.volume_id}")
    assert response.status_code == 200 and response.json() == {"success": True}
    assert get_volume(sim, volume.volume_id).json()["status"] == "deleting"
    sim.advance(30)
    assert get_volume(sim, volume.volume_id).status_code == 404


def test_cluster_attaches_by_id_in_its_region_only(sim: Sim) -> None:
    volume = create_volume(sim)
    missing = sim.http.post("/v1/compute/clusters", json={**BASE, "volume_id": "vol-x"})
    assert missing.status_code == 400 and missing.json()["error"]["param"] == "volume_id"
    elsewhere = create_volume(sim, region="us-west-2")
    wrong = sim.http.post("/v1/compute/clusters", json={**BASE, "volume_id": elsewhere.volume_id})
    assert wrong.status_code == 400
    assert "Shared volume does not exist in the datacenter" in wrong.json()["error"]["message"]
    both = {
        **BASE,
        "volume_id": volume.volume_id,
        "shared_volume": {"volume_name": "x", "size_tib": 1, "region": REGION},
    }
    assert sim.http.post("/v1/compute/clusters", json=both).status_code == 400
    assert sim.http.get("/v1/compute/clusters").json()["clusters"] == []


def test_volume_binds_at_ready_refuses_deletion_and_goes_with_its_cluster(sim: Sim) -> None:
    volume = create_volume(sim)
    cluster = sim.create(volume_id=volume.volume_id)
    assert [v.volume_id for v in cluster.volumes] == [volume.volume_id]
    sim.advance(60)
    assert get_volume(sim, volume.volume_id).json()["status"] == "available"  # not Ready yet
    sim.advance(300)
    assert sim.get(cluster.cluster_id).volumes[0].status == "bound"
    refused = sim.http.delete(f"{VOLUMES}/{volume.volume_id}")
    assert refused.status_code == 409
    assert cluster.cluster_id in refused.json()["error"]["message"]

    sim.http.delete(f"/v1/compute/clusters/{cluster.cluster_id}")
    assert sim.http.delete(f"{VOLUMES}/{volume.volume_id}").status_code == 409  # still Deleting
    sim.advance(60)  # the cluster is gone: the volume, not lifecycle-independent, goes with it
    assert get_volume(sim, volume.volume_id).json()["status"] == "deleting"
    sim.advance(30)
    assert get_volume(sim, volume.volume_id).status_code == 404


def test_a_lifecycle_independent_volume_outlives_its_cluster(sim: Sim) -> None:
    volume = create_volume(sim, is_lifecycle_independent=True)
    cluster = sim.ready(volume_id=volume.volume_id)
    sim.http.delete(f"/v1/compute/clusters/{cluster.cluster_id}")
    sim.advance(600)
    assert get_volume(sim, volume.volume_id).json()["status"] == "available"


def test_inline_shared_volume_is_created_with_the_cluster(sim: Sim) -> None:
    inline = {"volume_name": "scratch", "size_tib": 3, "region": REGION}
    cluster = sim.ready(shared_volume=inline)
    [attached] = cluster.volumes
    assert (attached.volume_name, attached.size_tib, attached.status) == ("scratch", 3, "bound")
    listed = sim.http.get(VOLUMES).json()["volumes"]
    assert [v["volume_id"] for v in listed] == [attached.volume_id]
    other = {**inline, "region": "us-west-2"}
    response = sim.http.post("/v1/compute/clusters", json={**BASE, "shared_volume": other})
    assert response.status_code == 400
    assert response.json()["error"]["param"] == "shared_volume.region"


def test_a_volume_made_for_a_cluster_of_another_region_is_refused(sim: Sim) -> None:
    cluster = sim.ready()
    body = {"volume_name": "d", "size_tib": 1, "region": "us-west-2"}
    response = sim.http.post(VOLUMES, json={**body, "instance_cluster_id": cluster.cluster_id})
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["param"] == "instance_cluster_id"
    assert "Shared volume does not exist in the datacenter" in error["message"]
    assert "us-west-2" in error["message"] and REGION in error["message"]
    assert sim.http.get(VOLUMES).json()["volumes"] == []
    same = sim.http.post(
        VOLUMES, json={**body, "region": REGION, "instance_cluster_id": cluster.cluster_id}
    )
    assert same.status_code == 200, same.text


def test_resize_shows_in_the_cluster_and_volumes_survive_a_restart(sim: Sim) -> None:
    volume = create_volume(sim)
    cluster = sim.ready(volume_id=volume.volume_id)
    sim.http.put(VOLUMES, json={"volume_id": volume.volume_id, "size_tib": 4})
    assert sim.get(cluster.cluster_id).volumes[0].size_tib == 4
    sim.http.close()
    again = Sim(sim.state_dir)
    restored = Cluster.model_validate(
        again.http.get(f"/v1/compute/clusters/{cluster.cluster_id}").json()
    )
    assert (restored.volumes[0].size_tib, restored.volumes[0].status) == (4, "bound")
    assert again.http.delete(f"{VOLUMES}/{volume.volume_id}").status_code == 409
    again.http.close()
