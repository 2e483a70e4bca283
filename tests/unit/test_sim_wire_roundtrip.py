"""The simulator stores and echoes every wire field through `together_api.wire`'s models.

The fields are enumerated from the models, not listed: a field added to a request model and its
response model is covered here, and must round-trip, without an edit to this test or to the
simulator. Only fields whose values the simulator checks (catalogue, counts) or that have a
nested shape need an entry in ``EXAMPLES``.
"""

from __future__ import annotations

import sqlite3
import types
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

import pytest
from pydantic import BaseModel

from tests.sim_app import BASE, REGION, Sim
from tests.specs import OIDC
from together_api.wire import (
    Cluster,
    ClusterCreateRequest,
    ClusterUpdateRequest,
    SharedVolume,
    VolumeCreateRequest,
    VolumeUpdateRequest,
)
from together_sim.volumes import NOT_ECHOED

VOLUMES = "/v1/compute/clusters/storage/volumes"
OLD_STATE = Path(__file__).resolve().parents[1] / "fixtures" / "old_state" / "simulator.sql"

EXAMPLES: dict[str, Any] = {
    **BASE,
    "project_id": "proj-roundtrip",
    "add_ons": [{"add_on_type": "headlamp", "name": "headlamp"}],
    "cluster_config": {"load_balancer": "TRAEFIK", "ingress": {"enabled": True}},
    "oidc_config": OIDC,
    # A prepaid cluster on a capacity pool: the update's reservation and pool fields apply.
    "billing_type": "RESERVED",
    "duration_days": 3,
    "reservation_start_time": "2027-01-02T03:04:05Z",
    "reservation_end_time": "2027-02-03T04:05:06Z",
    "capacity_pool_id": "pool-roundtrip",
}
"""Create values the simulator would refuse if made up, or that are nested models."""

PREPAID: tuple[str, ...] = ("add_ons", "billing_type", "duration_days", "capacity_pool_id")
"""What the updated cluster is created with: reservation and pool fields are PUT to it."""

UPDATES: dict[str, Any] = {
    "add_ons": [{"name": "headlamp", "config": {"headlamp": {"enabled": True}}}],
    "cluster_config": {"load_balancer": "NGINX", "observability": {"enabled": True}},
}
"""PUT values of nested shape (an add-on PUT names an existing add-on)."""


def _scalar(annotation: Any, variant: int) -> Any:
    """A JSON value of a plain type (``X`` or ``X | None``); ``variant`` 1 differs from 0."""
    if get_origin(annotation) in (Union, types.UnionType):
        (annotation,) = [a for a in get_args(annotation) if a is not type(None)]
    if get_origin(annotation) is Literal:
        return get_args(annotation)[-variant]
    values: dict[Any, tuple[Any, Any]] = {
        bool: (True, False),
        int: (8, 16),
        float: (8.0, 16.0),
        str: ("probe", "probe-2"),
        datetime: ("2027-01-02T03:04:05Z", "2027-02-03T04:05:06Z"),
    }
    if annotation not in values:
        pytest.fail(f"give a value of type {annotation} in EXAMPLES or UPDATES")
    return values[annotation][variant]


def _shared(request: type[BaseModel], response: type[BaseModel]) -> list[str]:
    return sorted(set(request.model_fields) & set(response.model_fields))


def _body(
    request: type[BaseModel], fields: list[str], given: dict[str, Any], variant: int
) -> dict[str, Any]:
    return {
        name: given[name]
        if name in given
        else _scalar(request.model_fields[name].annotation, variant)
        for name in fields
    }


def _within(sent: Any, got: Any) -> bool:
    """``sent`` is echoed in ``got``: every key sent, at any depth, has the value sent."""
    if isinstance(sent, dict):
        return isinstance(got, dict) and all(_within(v, got.get(k)) for k, v in sent.items())
    if isinstance(sent, list):
        return (
            isinstance(got, list)
            and len(sent) == len(got)
            and all(_within(s, g) for s, g in zip(sent, got, strict=True))
        )
    return bool(sent == got)


def _not_echoed(sent: dict[str, Any], got: dict[str, Any]) -> list[str]:
    return [
        f"{k}: sent {v!r}, got {got.get(k)!r}"
        for k, v in sent.items()
        if not _within(v, got.get(k))
    ]


def test_every_field_the_create_and_the_cluster_share_round_trips(sim: Sim) -> None:
    fields = _shared(ClusterCreateRequest, Cluster)
    assert {"num_gpus", "region", "slurm_shm_size_gib"} <= set(fields)  # the enumeration works
    sent = _body(ClusterCreateRequest, fields, EXAMPLES, 0)
    prepaid = {"duration_days": EXAMPLES["duration_days"]}  # a RESERVED cluster's, not echoed
    created = sim.http.post("/v1/compute/clusters", json={**BASE, **prepaid, **sent})
    assert created.status_code == 200, created.text
    got = sim.http.get(f"/v1/compute/clusters/{created.json()['cluster_id']}").json()
    assert _not_echoed(sent, got) == []


def test_every_field_the_update_and_the_cluster_share_round_trips(sim: Sim) -> None:
    cluster = sim.ready(**_body(ClusterCreateRequest, list(PREPAID), EXAMPLES, 0))
    fields = _shared(ClusterUpdateRequest, Cluster)
    assert {"num_gpus", "reservation_end_time"} <= set(fields)
    sent = _body(ClusterUpdateRequest, fields, UPDATES, 1)
    response = sim.put(cluster.cluster_id, sent)
    assert response.status_code == 200, response.text
    assert _not_echoed(sent, sim.get(cluster.cluster_id).model_dump(mode="json")) == []


def test_every_field_the_volume_create_and_the_volume_share_round_trips(sim: Sim) -> None:
    fields = [f for f in _shared(VolumeCreateRequest, SharedVolume) if f not in NOT_ECHOED]
    assert {"volume_name", "size_tib"} <= set(fields)
    sent = _body(VolumeCreateRequest, fields, {"size_tib": 2}, 0)
    created = sim.http.post(VOLUMES, json={"region": REGION, **sent})
    assert created.status_code == 200, created.text
    volume_id = created.json()["volume_id"]
    assert _not_echoed(sent, sim.http.get(f"{VOLUMES}/{volume_id}").json()) == []

    resized = [f for f in _shared(VolumeUpdateRequest, SharedVolume) if f != "volume_id"]
    update = _body(VolumeUpdateRequest, resized, {}, 1)
    response = sim.http.put(VOLUMES, json={"volume_id": volume_id, **update})
    assert response.status_code == 200, response.text
    assert _not_echoed(update, sim.http.get(f"{VOLUMES}/{volume_id}").json()) == []


def test_a_state_saved_before_the_wire_models_loads(tmp_path: Path) -> None:
    """The old-state fixture's simulator state (every field flat on the cluster and volume)."""
    state = tmp_path / "state"
    state.mkdir()
    db = sqlite3.connect(state / "simulator.sqlite3")
    db.executescript(OLD_STATE.read_text())
    db.close()
    sim = Sim(state)
    [cluster] = [
        Cluster.model_validate(c) for c in sim.http.get("/v1/compute/clusters").json()["clusters"]
    ]
    assert (cluster.cluster_name, cluster.num_gpus, cluster.desired_preemptible_gpus) == (
        "train",
        8,
        8,
    )
    assert (cluster.project_id, cluster.nvidia_driver_version) == ("proj-test", "570")
    [volume] = sim.http.get(VOLUMES, params={"projectId": "proj-test"}).json()["volumes"]
    assert (volume["volume_name"], volume["size_tib"]) == ("ckpt", 2)
    assert cluster.attached_volume_id == volume["volume_id"]
