"""TogetherClient's shared-volume methods against httpx.MockTransport: paths, bodies, errors,
and the wait until a volume is usable (fake clock, no sleeping)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from tests.fake_time import FakeTime
from together_api.wire import VolumeCreateRequest
from together_facts.errors import (
    NotFoundError,
    TogetherError,
    VolumeInUseError,
    VolumeNotAvailableError,
)

VOLUMES = "/v1/compute/clusters/storage/volumes"


def volume(status: str = "available", **extra: Any) -> dict[str, Any]:
    return {"volume_id": "vol-1", "volume_name": "data", "size_tib": 2, "status": status, **extra}


@pytest.mark.parametrize(
    "base_url", ["https://api.test", "https://api.test/", "https://api.test/v1"]
)
def test_every_volume_endpoint_with_either_base_url_form(make_client: Any, base_url: str) -> None:
    seen: list[tuple[str, str, str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content) if request.content else None
        seen.append((request.method, request.url.path, request.url.query.decode(), body))
        if request.method == "DELETE":
            return httpx.Response(200, json={"success": True})
        if request.method == "GET" and request.url.path == VOLUMES:
            return httpx.Response(200, json={"volumes": [volume(), volume(volume_id="vol-2")]})
        return httpx.Response(200, json=volume())

    client = make_client(handler, base_url)
    created = client.create_volume(
        VolumeCreateRequest(volume_name="data", size_tib=2, region="us-central-8")
    )
    assert created.volume_id == "vol-1" and created.is_available
    assert client.get_volume("vol-1").size_tib == 2
    assert [v.volume_id for v in client.list_volumes(project_id="p-1")] == ["vol-1", "vol-2"]
    client.resize_volume("vol-1", 5)
    client.delete_volume("vol-1")
    assert seen == [
        ("POST", VOLUMES, "", {"volume_name": "data", "size_tib": 2, "region": "us-central-8"}),
        ("GET", f"{VOLUMES}/vol-1", "", None),
        ("GET", VOLUMES, "projectId=p-1", None),
        ("PUT", VOLUMES, "", {"volume_id": "vol-1", "size_tib": 5}),
        ("DELETE", f"{VOLUMES}/vol-1", "", None),
    ]


def test_the_volume_model_keeps_absent_extras_as_none(make_client: Any) -> None:
    client = make_client(lambda r: httpx.Response(200, json=volume("bound", future="x")))
    got = client.get_volume("vol-1")
    assert (got.region, got.is_lifecycle_independent, got.project_id, got.cluster_ids) == (
        None,
        None,
        None,
        None,
    )
    assert got.is_available and not got.is_deleting


def test_deleting_an_attached_volume_says_what_to_do(make_client: Any) -> None:
    error = {"error": {"message": "volume vol-1 is attached to cluster(s) c-1", "code": 409}}
    client = make_client(lambda r: httpx.Response(409, json=error))
    with pytest.raises(VolumeInUseError) as raised:
        client.delete_volume("vol-1")
    assert raised.value.status == 409 and raised.value.field == "volume_id"
    assert "attached to cluster(s) c-1" in str(raised.value)
    assert "delete the clusters that use it first" in str(raised.value)


def test_delete_of_a_missing_volume_is_not_found_and_success_false_is_an_error(
    make_client: Any,
) -> None:
    with pytest.raises(NotFoundError):
        make_client(lambda r: httpx.Response(404, json={})).delete_volume("vol-1")
    with pytest.raises(TogetherError, match="success=false"):
        make_client(lambda r: httpx.Response(200, json={"success": False})).delete_volume("vol-1")


def test_clusters_using_volume_reads_the_clusters_volume_lists(make_client: Any) -> None:
    clusters = [
        {"cluster_id": "c-1", "status": "Ready", "volumes": [{"volume_id": "vol-1"}]},
        {"cluster_id": "c-2", "status": "Ready", "volumes": [{"volume_id": "vol-2"}]},
        {"cluster_id": "c-3", "status": "Ready", "volumes": []},
    ]
    client = make_client(lambda r: httpx.Response(200, json={"clusters": clusters}))
    assert [c.cluster_id for c in client.clusters_using_volume("vol-1")] == ["c-1"]


def test_wait_until_volume_available_polls_through_provisioning(
    make_client: Any, fake_time: FakeTime
) -> None:
    statuses = iter(["scheduled", "provisioning", "provisioning", "available"])
    client = make_client(lambda r: httpx.Response(200, json=volume(next(statuses))))
    assert client.wait_until_volume_available("vol-1", timeout=600).status == "available"
    assert len(fake_time.sleeps) == 3 and fake_time.now > 1000.0


@pytest.mark.parametrize("status", ["failed", "access_revoked", "deleting"])
def test_wait_until_volume_available_fails_fast(make_client: Any, status: str) -> None:
    client = make_client(lambda r: httpx.Response(200, json=volume(status)))
    with pytest.raises(VolumeNotAvailableError) as raised:
        client.wait_until_volume_available("vol-1", timeout=600)
    assert raised.value.last_status == status and not raised.value.timed_out


def test_wait_until_volume_available_reports_a_vanished_volume(make_client: Any) -> None:
    client = make_client(lambda r: httpx.Response(404, json={}))
    with pytest.raises(VolumeNotAvailableError, match="disappeared"):
        client.wait_until_volume_available("vol-1", timeout=600)


def test_wait_until_volume_available_gives_up_at_the_deadline(
    make_client: Any, fake_time: FakeTime
) -> None:
    client = make_client(lambda r: httpx.Response(200, json=volume("provisioning")))
    with pytest.raises(VolumeNotAvailableError) as raised:
        client.wait_until_volume_available("vol-1", timeout=120)
    assert raised.value.timed_out and raised.value.last_status == "provisioning"
    assert fake_time.now == pytest.approx(1120.0)


def _lost_poll_then(answer: httpx.Response, make_client: Any) -> tuple[Any, list[int]]:
    """A client whose first poll fails on every retry (a transient 502), then gets `answer`."""
    calls: list[int] = []
    attempts: list[int] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        if len(calls) <= attempts[0]:
            return httpx.Response(502, json={"error": {"message": "bad gateway"}})
        return answer

    client = make_client(handler)
    attempts.append(client.retry.attempts)
    return client, calls


def test_wait_until_volume_available_polls_on_through_a_lost_poll(make_client: Any) -> None:
    client, calls = _lost_poll_then(httpx.Response(200, json=volume("available")), make_client)
    assert client.wait_until_volume_available("vol-1", timeout=600).status == "available"
    assert len(calls) == client.retry.attempts + 1


def test_wait_until_volume_deleted_polls_on_through_a_lost_poll(make_client: Any) -> None:
    client, calls = _lost_poll_then(httpx.Response(404, json={}), make_client)
    client.wait_until_volume_deleted("vol-1", timeout=600)
    assert len(calls) == client.retry.attempts + 1
