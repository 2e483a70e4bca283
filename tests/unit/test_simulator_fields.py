"""The simulator accepts what Together's own clients send, and echoes what the SDK model has."""

from __future__ import annotations

import re
from typing import Any

from tests.sim_app import BASE, Sim
from tests.specs import OIDC
from together_api.wire import Cluster
from together_facts.values import LIFECYCLE_REASONS
from together_sim.requests import IGNORED_HEADER

IGNORED = IGNORED_HEADER.lower()
EVERY_FIELD: dict[str, Any] = {
    **BASE,
    "cluster_type": "KUBERNETES",
    "billing_type": "SCHEDULED_CAPACITY",  # the reservation window is a prepaid cluster's
    "auto_scaled": False,
    "gpu_node_failover_enabled": False,
    "auto_scale": False,
    "auto_scale_max_gpus": 16,
    "install_traefik": True,
    "cluster_config": {"load_balancer": "TRAEFIK", "ingress": {"enabled": True}},
    "oidc_config": OIDC,
    "slurm_shm_size_gib": 64,
    "slurm_image": "slurm:1",
    "capacity_pool_id": "pool-1",
    "num_capacity_pool_gpus": 8,
    "reservation_start_time": "2026-12-02T00:00:00Z",
    "reservation_end_time": "2026-12-09T00:00:00Z",
    "acceptance_tests_params": {"enabled": True, "dcgm_diag_level": "DCGM_DIAG_LEVEL_SHORT"},
    "add_ons": [{"add_on_type": "headlamp", "name": "headlamp"}],
}


def test_create_accepts_every_spec_field_and_echoes_the_sdk_model_ones(sim: Sim) -> None:
    response = sim.http.post("/v1/compute/clusters", json=EVERY_FIELD)
    assert response.status_code == 200, response.text
    assert IGNORED not in response.headers
    body = response.json()
    assert body["install_traefik"] is True
    assert body["cluster_config"]["load_balancer"] == "TRAEFIK"
    assert body["oidc_config"]["issuer_url"] == "https://idp.invalid"
    assert body["slurm_shm_size_gib"] == 64
    assert body["capacity_pool_id"] == "pool-1"
    assert body["reservation_start_time"].startswith("2026-12-02T00:00:00")
    assert body["reservation_end_time"].startswith("2026-12-09T00:00:00")
    for field in ("os_image", "machine_cluster_id", "ums_org_id", "ums_project_id"):
        assert body[field], field
    # Accepted and stored, but not in the SDK's Cluster model, so never echoed:
    assert not {"auto_scaled", "gpu_node_failover_enabled", "slurm_image"} & set(body)


def test_install_traefik_defaults_to_false_like_terraform(sim: Sim) -> None:
    assert sim.create().model_dump()["install_traefik"] is False


def test_unknown_fields_are_ignored_at_any_depth_and_named(sim: Sim) -> None:
    body = {**BASE, "surprise": 1, "cluster_config": {"load_balancer": "NONE", "extra": True}}
    response = sim.http.post("/v1/compute/clusters", json=body)
    assert response.status_code == 200, response.text
    assert response.headers[IGNORED] == "surprise,cluster_config.extra"
    assert "surprise" not in response.json()


def test_known_fields_are_still_type_checked(sim: Sim) -> None:
    response = sim.http.post("/v1/compute/clusters", json={**BASE, "install_traefik": "maybe"})
    assert response.status_code == 400
    assert response.json()["error"]["param"] == "install_traefik"


def test_terraform_style_put_of_every_attribute_with_nulls_keeps_what_is_null(sim: Sim) -> None:
    cluster = sim.ready(num_preemptible_gpus=8, project_id="p")
    body = {
        **BASE,
        "project_id": "p",
        "num_gpus": 16,
        "num_preemptible_gpus": None,
        "cluster_type": "KUBERNETES",
        "install_traefik": False,
        "auto_scaled": False,
        "volume_id": None,
        "reservation_end_time": None,
        "add_ons": None,
        "cluster_config": None,
    }
    response = sim.put(cluster.cluster_id, body)
    assert response.status_code == 200, response.text
    updated = Cluster.model_validate(response.json())
    assert (updated.num_gpus, updated.desired_preemptible_gpus) == (16, 8)
    ignored = set(response.headers[IGNORED].split(","))
    assert {"cluster_name", "region", "install_traefik", "auto_scaled", "project_id"} <= ignored


def test_whoami_names_the_default_project(sim: Sim) -> None:
    body = sim.http.get("/v3/whoami").json()
    assert body["type"] == "project_api_key"
    assert body["project"]["id"] == sim.create().project_id


def test_node_names_and_lifecycle_reasons_follow_the_docs(sim: Sim) -> None:
    cluster = sim.ready(num_preemptible_gpus=8, project_id="p")
    sim.advance(60)
    cid = cluster.cluster_id
    sim.put(cid, {"num_gpus": 16})
    sim.http.post(f"/_sim/clusters/{cid}/reclaim", json={"nodes": 1})
    sim.put(cid, {"num_gpus": 8})
    now = sim.get(cid)
    names = [n.node_name for n in now.gpu_worker_nodes + (now.deleted_gpu_worker_nodes or [])]
    standard = re.compile(r"^gpu-dp-[a-z0-9]{5}-[a-z0-9]{5}$")
    preemptible = re.compile(r"^gpu-preemptible-dp-[a-z0-9]{5}-[a-z0-9]{5}$")
    assert now.gpu_worker_nodes and now.deleted_gpu_worker_nodes  # both lists are checked
    assert all(standard.match(n or "") or preemptible.match(n or "") for n in names), names
    assert any(preemptible.match(n.node_id) for n in now.gpu_worker_nodes)
    for node in now.gpu_worker_nodes:
        assert node.node_name == node.node_id == node.host_name
        assert node.is_preemptible == bool(preemptible.match(node.node_id))
    reasons = [e.reason for e in now.node_lifecycle_events or []]
    assert reasons == [
        "TogetherNodeAdded",
        "TogetherScaledUp",
        "TogetherPreemptionNotified",
        "TogetherScaledDown",
    ]
    assert set(reasons) <= set(LIFECYCLE_REASONS)


# --- reservations, capacity pools and add-ons as Together's update request documents them -------

RESERVED: dict[str, Any] = {"billing_type": "RESERVED", "duration_days": 7}


def _error(response: Any) -> tuple[int, str]:
    return response.status_code, response.json()["error"]["param"]


def test_a_reserved_cluster_reports_when_its_reservation_ends(sim: Sim) -> None:
    cluster = sim.create(**RESERVED)
    assert cluster.created_at is not None and cluster.reservation_end_time is not None
    assert (cluster.reservation_end_time - cluster.created_at).days == 7
    assert sim.create().reservation_end_time is None  # on demand: no end


def test_a_reservation_is_extended_and_never_shortened(sim: Sim) -> None:
    cluster = sim.ready(**RESERVED, reservation_end_time="2027-06-01T00:00:00Z")
    later = sim.put(cluster.cluster_id, {"reservation_end_time": "2027-07-01T00:00:00Z"})
    assert later.status_code == 200, later.text
    assert later.json()["reservation_end_time"].startswith("2027-07-01T00:00:00")
    earlier = sim.put(cluster.cluster_id, {"reservation_end_time": "2027-06-15T00:00:00Z"})
    assert _error(earlier) == (400, "reservation_end_time")
    assert "can only be extended" in earlier.json()["error"]["message"]


def test_an_on_demand_cluster_takes_no_reservation_fields(sim: Sim) -> None:
    cluster = sim.ready()
    end = sim.put(cluster.cluster_id, {"reservation_end_time": "2027-07-01T00:00:00Z"})
    assert _error(end) == (400, "reservation_end_time")
    reserved = sim.put(cluster.cluster_id, {"num_reserved_gpus": 8})
    assert _error(reserved) == (400, "num_reserved_gpus")


def test_reserved_gpus_change_in_place_in_whole_nodes(sim: Sim) -> None:
    cluster = sim.ready(**RESERVED, num_gpus=16)
    assert sim.get(cluster.cluster_id).num_reserved_gpus == 16  # Together's default: num_gpus
    assert sim.put(cluster.cluster_id, {"num_reserved_gpus": 8}).status_code == 200
    assert sim.get(cluster.cluster_id).num_reserved_gpus == 8
    assert _error(sim.put(cluster.cluster_id, {"num_reserved_gpus": 4})) == (
        400,
        "num_reserved_gpus",
    )


def test_capacity_pool_gpus_need_a_pool_and_stay_within_num_gpus(sim: Sim) -> None:
    plain = sim.ready()
    assert _error(sim.put(plain.cluster_id, {"num_capacity_pool_gpus": 8})) == (
        400,
        "num_capacity_pool_gpus",
    )
    pooled = sim.ready(capacity_pool_id="pool-1", num_gpus=16, num_capacity_pool_gpus=8)
    assert sim.put(pooled.cluster_id, {"num_capacity_pool_gpus": 16}).status_code == 200
    assert sim.get(pooled.cluster_id).num_capacity_pool_gpus == 16
    over = sim.put(pooled.cluster_id, {"num_capacity_pool_gpus": 24})
    assert _error(over) == (400, "num_capacity_pool_gpus")


def test_a_scheduled_window_needs_both_ends_in_order(sim: Sim) -> None:
    body = {**BASE, "billing_type": "SCHEDULED_CAPACITY"}
    missing = sim.http.post("/v1/compute/clusters", json=body)
    assert _error(missing) == (400, "reservation_end_time")
    backwards = sim.http.post(
        "/v1/compute/clusters",
        json={
            **body,
            "reservation_start_time": "2027-02-01T00:00:00Z",
            "reservation_end_time": "2027-01-01T00:00:00Z",
        },
    )
    assert _error(backwards) == (400, "reservation_end_time")


def test_an_enabled_add_on_has_a_state_once_the_cluster_was_ready(sim: Sim) -> None:
    config = {"dashboard": {"enabled": True}}
    add_on = {"name": "dash", "add_on_type": "dashboard", "config": config}
    cluster = sim.create(add_ons=[add_on])
    assert [a.state for a in cluster.add_ons] == [{}]
    cluster = sim.ready(add_ons=[add_on])
    assert [(a.name, a.state) for a in cluster.add_ons] == [("dash", {"dashboard": {}})]
