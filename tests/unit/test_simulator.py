"""The simulator in-process (Starlette TestClient), with time moved only explicitly."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.sim_app import BASE, KEY, REGION, Sim, TestClient
from together_api.kubeconfig import decode_kube_config
from together_api.wire import Cluster, ClusterList, ClusterStatus, RegionList
from together_sim import SimulatorConfig, create_app


def preemptible(cluster: Cluster) -> list[str]:
    return [n.node_id for n in cluster.gpu_worker_nodes if n.is_preemptible]


def test_create_walks_through_provisioning_to_ready(sim: Sim) -> None:
    cluster = sim.create()
    assert cluster.status == ClusterStatus.WAITING_FOR_CONTROL_PLANE_NODES
    assert cluster.control_plane_ready is False
    seen = [cluster.status]
    for _ in range(6):
        sim.advance(60)
        seen.append(sim.get(cluster.cluster_id).status)
    assert seen == [
        "WaitingForControlPlaneNodes",
        "WaitingForDataPlaneNodes",
        "WaitingForSubnet",
        "InstallingDrivers",
        "RunningAcceptanceTests",
        "RunningAcceptanceTests",
        "Ready",
    ]
    ready = sim.get(cluster.cluster_id)
    assert ready.is_ready and ready.control_plane_ready
    assert [p.phase for p in ready.phase_transitions][-1] == "CLUSTER_PHASE_READY"
    assert ready.first_ready_at is not None and ready.created_at is not None
    assert (ready.first_ready_at - ready.created_at).total_seconds() == pytest.approx(360)
    assert [n.node_id.startswith("gpu-dp-") for n in ready.gpu_worker_nodes] == [True]
    assert all(n.status == "Ready" for n in ready.gpu_worker_nodes)
    kube_config = decode_kube_config(ready.kube_config)  # base64 on the wire, as Together's
    assert kube_config != ready.kube_config
    assert "token: " in kube_config and "kind: Config" in kube_config


def test_preemptible_fill_is_one_node_a_minute_and_stops_at_spare_capacity(sim: Sim) -> None:
    sim.capacity(preemptible_gpus=16)
    cluster = sim.ready(num_preemptible_gpus=32, project_id="proj-1")
    assert (cluster.desired_preemptible_gpus, cluster.allocated_preemptible_gpus) == (32, 0)
    sim.advance(60)
    assert sim.get(cluster.cluster_id).allocated_preemptible_gpus == 8
    sim.advance(60)
    assert sim.get(cluster.cluster_id).allocated_preemptible_gpus == 16
    sim.advance(3600)
    later = sim.get(cluster.cluster_id)
    assert (later.desired_preemptible_gpus, later.allocated_preemptible_gpus) == (32, 16)
    assert all(n.startswith("gpu-preemptible-dp-") for n in preemptible(later))
    assert later.status == ClusterStatus.READY


def test_reclaim_notifies_drains_removes_and_refills(sim: Sim) -> None:
    cluster = sim.ready(num_preemptible_gpus=16, project_id="proj-1")
    sim.advance(120)
    cid = cluster.cluster_id
    reclaimed = sim.http.post(f"/_sim/clusters/{cid}/reclaim", json={"nodes": 1}).json()
    [node_id] = reclaimed["reclaimed"]

    draining = sim.get(cid)
    events = [e for e in draining.node_lifecycle_events or [] if e.is_preemption]
    assert [(e.node_id, e.reason) for e in events] == [(node_id, "TogetherPreemptionNotified")]
    assert draining.allocated_preemptible_gpus == 16  # draining nodes still count
    assert {n.node_id: n.status for n in draining.gpu_worker_nodes}[node_id] == "Draining"

    sim.advance(300)
    removed = sim.get(cid)
    assert removed.allocated_preemptible_gpus == 8
    assert node_id not in preemptible(removed)
    [gone] = [n for n in removed.deleted_gpu_worker_nodes or [] if n.node_id == node_id]
    assert gone.deleted_at is not None

    sim.advance(60)
    refilled = sim.get(cid)
    assert refilled.allocated_preemptible_gpus == 16
    assert node_id not in preemptible(refilled)


def test_a_reclaim_can_ask_for_a_longer_drain_window_to_watch_it(sim: Sim) -> None:
    """`drain_seconds` (a simulator knob, not Together's) keeps the node cordoned longer."""
    cluster = sim.ready(num_preemptible_gpus=16, project_id="proj-1")
    sim.advance(120)
    cid = cluster.cluster_id
    body = {"nodes": 1, "drain_seconds": 1800}
    [node_id] = sim.http.post(f"/_sim/clusters/{cid}/reclaim", json=body).json()["reclaimed"]
    [event] = [e for e in sim.get(cid).node_lifecycle_events or [] if e.is_preemption]
    assert "removed within 1800s" in (event.message or "")
    sim.advance(1799)
    assert {n.node_id: n.status for n in sim.get(cid).gpu_worker_nodes}[node_id] == "Draining"
    sim.advance(1)
    assert node_id not in preemptible(sim.get(cid))
    for bad in (0, -5, "long", True):
        refused = sim.http.post(f"/_sim/clusters/{cid}/reclaim", json={"drain_seconds": bad})
        assert refused.status_code == 400
        error = refused.json()["error"]
        assert error["param"] == "drain_seconds" and "above 0" in error["message"], error


def test_lowering_the_target_drains_surplus_and_raising_fills(sim: Sim) -> None:
    cluster = sim.ready(num_preemptible_gpus=24, project_id="proj-1")
    sim.advance(180)
    cid = cluster.cluster_id
    lowered = Cluster.model_validate(sim.put(cid, {"num_preemptible_gpus": 8}).json())
    assert lowered.desired_preemptible_gpus == 8
    assert lowered.allocated_preemptible_gpus == 24
    sim.advance(300)
    assert sim.get(cid).allocated_preemptible_gpus == 8
    sim.put(cid, {"num_preemptible_gpus": 16})
    sim.advance(60)
    assert sim.get(cid).allocated_preemptible_gpus == 16


def test_scaling_standard_gpus_adds_and_removes_nodes(sim: Sim) -> None:
    cluster = sim.ready(num_gpus=16)
    cid = cluster.cluster_id
    up = Cluster.model_validate(sim.put(cid, {"num_gpus": 32}).json())
    assert up.num_gpus == 32 and len(up.gpu_worker_nodes) == 4
    assert sorted(n.status for n in up.gpu_worker_nodes) == ["NotReady"] * 2 + ["Ready"] * 2
    sim.advance(120)
    assert all(n.status == "Ready" for n in sim.get(cid).gpu_worker_nodes)
    down = Cluster.model_validate(sim.put(cid, {"num_gpus": 8}).json())
    assert down.num_gpus == 8 and len(down.gpu_worker_nodes) == 1
    assert len(down.deleted_gpu_worker_nodes or []) == 3


def test_out_of_stock_on_create_and_on_scale_up(sim: Sim) -> None:
    sim.capacity(standard_gpus=16)
    cluster = sim.create(num_gpus=16)
    response = sim.http.post("/v1/compute/clusters", json={**BASE, "num_gpus": 8})
    assert response.status_code == 409
    assert response.json()["error"]["message"] == "Out of stock"
    assert sim.put(cluster.cluster_id, {"num_gpus": 24}).status_code == 409
    assert sim.get(cluster.cluster_id).num_gpus == 16


def test_delete_shows_deleting_then_404(sim: Sim) -> None:
    cluster = sim.ready()
    path = f"/v1/compute/clusters/{cluster.cluster_id}"
    first = sim.http.delete(path)
    assert first.status_code == 200 and first.json() == {"cluster_id": cluster.cluster_id}
    assert sim.get(cluster.cluster_id).status == ClusterStatus.DELETING
    assert sim.http.delete(path).status_code == 200
    sim.advance(60)
    assert sim.http.get(path).status_code == 404
    assert sim.http.delete(path).status_code == 404


@pytest.mark.parametrize(
    ("overrides", "param"),
    [
        ({"num_gpus": 12}, "num_gpus"),
        ({"num_gpus": 0}, "num_gpus"),
        ({"num_preemptible_gpus": 4, "project_id": "p"}, "num_preemptible_gpus"),
        ({"num_preemptible_gpus": -8, "project_id": "p"}, "num_preemptible_gpus"),
        ({"num_preemptible_gpus": 8, "cluster_type": "SLURM", "project_id": "p"}, None),
        ({"num_preemptible_gpus": 8}, "project_id"),
        ({"region": "mars-1"}, "region"),
        ({"gpu_type": "B200_SXM"}, "gpu_type"),
        ({"gpu_type": "H101"}, "gpu_type"),
        ({"billing_type": "RESERVED"}, "duration_days"),
        ({"cuda_version": None, "nvidia_driver_version": None}, "cuda_version"),
        ({"nvidia_driver_version": "999"}, "nvidia_driver_version"),
        ({"auto_scaled": "sometimes"}, "auto_scaled"),
    ],
)
def test_create_validation(sim: Sim, overrides: dict[str, Any], param: str | None) -> None:
    body = {k: v for k, v in {**BASE, **overrides}.items() if v is not None}
    response = sim.http.post("/v1/compute/clusters", json=body)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["message"] and error["type"] == "invalid_request_error"
    if param is not None:
        assert error["param"] == param or error["param"].startswith(param)


def test_create_by_catalogue_id_and_list_regions(sim: Sim) -> None:
    regions = RegionList.model_validate(sim.http.get("/v1/compute/regions").json()).regions
    central = next(r for r in regions if r.name == REGION)
    entry = central.driver_versions[0]
    body = {k: v for k, v in BASE.items() if k not in ("cuda_version", "nvidia_driver_version")}
    response = sim.http.post("/v1/compute/clusters", json={**body, "nvidia_version_id": entry.id})
    assert response.status_code == 200
    assert response.json()["cuda_version"] == entry.cuda_version


def test_put_ignores_unknown_fields_and_nulls(sim: Sim) -> None:
    cluster = sim.ready()
    body = {"cluster_name": "train", "region": REGION, "num_gpus": 16, "num_reserved_gpus": None}
    response = sim.put(cluster.cluster_id, body)
    assert response.status_code == 200, response.text
    assert response.json()["num_gpus"] == 16


def test_update_rejects_preemptible_on_slurm(sim: Sim) -> None:
    cluster = sim.ready(cluster_type="SLURM")
    assert sim.put(cluster.cluster_id, {"num_preemptible_gpus": 8}).status_code == 400


def test_list_filters_by_project(sim: Sim) -> None:
    sim.create(project_id="a")
    sim.create(project_id="b")
    body = sim.http.get("/v1/compute/clusters", params={"projectId": "a"}).json()
    assert [c.project_id for c in ClusterList.model_validate(body).clusters] == ["a"]
    assert len(sim.http.get("/v1/compute/clusters").json()["clusters"]) == 2


@pytest.mark.parametrize("header", [None, "Bearer wrong", "Basic sim-key"])
def test_auth_is_required(sim: Sim, header: str | None) -> None:
    headers = {"Authorization": header} if header else {}
    with TestClient(sim.app) as anonymous:
        response = anonymous.get("/v1/compute/clusters", headers=headers)
    assert response.status_code == 401
    assert response.json()["error"]["type"] == "authentication_error"


def test_two_apps_in_one_process_serve_their_own_state_and_keys(tmp_path: Path) -> None:
    """The handlers are module functions: each app serves the runtime in its own state."""
    first, second = Sim(tmp_path / "a"), Sim(tmp_path / "b")
    first.create()
    first.advance(3600)
    assert len(first.http.get("/v1/compute/clusters").json()["clusters"]) == 1
    assert second.http.get("/v1/compute/clusters").json()["clusters"] == []
    assert (
        first.http.get("/_sim/clock").json()["epoch"]
        > second.http.get("/_sim/clock").json()["epoch"]
    )
    other_key = create_app(SimulatorConfig(api_keys=("other",)))
    with TestClient(other_key, headers={"Authorization": f"Bearer {KEY}"}) as client:
        assert client.get("/v1/compute/clusters").status_code == 401
        assert client.get("/_sim/clock").status_code == 404  # no --admin: no admin routes


def test_state_survives_a_restart(sim: Sim) -> None:
    cluster = sim.ready(num_preemptible_gpus=8, project_id="p")
    sim.advance(60)
    sim.http.close()
    again = Sim(sim.state_dir)
    restored = again.get(cluster.cluster_id)
    assert restored.status == ClusterStatus.READY
    assert restored.allocated_preemptible_gpus == 8
    again.advance(3600)
    assert again.get(cluster.cluster_id).allocated_preemptible_gpus == 8


def test_faults_hit_the_api_but_never_admin(sim: Sim) -> None:
    faults = {"error_rate": 1.0, "error_statuses": [503], "retry_after": 2}
    assert sim.http.put("/_sim/faults", json=faults).status_code == 200
    response = sim.http.get("/v1/compute/regions")
    assert response.status_code == 503 and response.headers["retry-after"] == "2"
    assert sim.http.get("/_sim/clock").status_code == 200
    assert sim.http.delete("/_sim/faults").status_code == 200
    assert sim.http.get("/v1/compute/regions").status_code == 200


def test_drop_fault_closes_without_a_response(sim: Sim) -> None:
    sim.http.put("/_sim/faults", json={"drop_rate": 1.0})
    with pytest.raises(ConnectionAbortedError):
        sim.http.get("/v1/compute/regions")
    counts = sim.http.get("/_sim/requests").json()["counts"]
    assert {"method": "GET", "path": "/v1/compute/regions", "status": 0, "count": 1} in counts


def test_lost_answer_fault_does_the_work_then_drops_the_answer(sim: Sim) -> None:
    sim.http.put("/_sim/faults", json={"lost_answer_rate": 1.0})
    with pytest.raises(ConnectionAbortedError):
        sim.http.post("/v1/compute/clusters", json=BASE)
    sim.http.delete("/_sim/faults")
    listed = sim.http.get("/v1/compute/clusters").json()["clusters"]
    assert [c["cluster_name"] for c in listed] == ["train"]  # created, though nobody heard
    counts = sim.http.get("/_sim/requests").json()["counts"]
    assert {"method": "POST", "path": "/v1/compute/clusters", "status": 200, "count": 1} in counts


def test_fail_provisioning_fault_then_teardown(sim: Sim) -> None:
    sim.http.put("/_sim/faults", json={"fail_provisioning": True})
    cluster = sim.create()
    sim.http.delete("/_sim/faults")
    sim.advance(360)
    failed = sim.get(cluster.cluster_id)
    assert failed.is_failed and not failed.is_ready
    assert failed.latest_phase == "CLUSTER_PHASE_ACCEPTANCE_TESTS_FAILED"
    sim.advance(120)
    assert sim.get(cluster.cluster_id).status == ClusterStatus.DELETING
    sim.advance(60)
    assert sim.http.get(f"/v1/compute/clusters/{cluster.cluster_id}").status_code == 404


def test_admin_fail_marks_a_provisioning_cluster_failed(sim: Sim) -> None:
    cluster = sim.create()
    sim.advance(100)
    response = sim.http.post(f"/_sim/clusters/{cluster.cluster_id}/fail")
    assert response.status_code == 200
    assert Cluster.model_validate(response.json()).is_failed
    ready = sim.ready()
    assert sim.http.post(f"/_sim/clusters/{ready.cluster_id}/fail").status_code == 409


def test_request_log_counts_api_calls_only(sim: Sim) -> None:
    cluster = sim.create()
    sim.get(cluster.cluster_id)
    sim.http.get("/v1/compute/clusters/nope")
    log = sim.http.get("/_sim/requests").json()
    assert [(r["method"], r["path"], r["status"]) for r in log["requests"]] == [
        ("POST", "/v1/compute/clusters", 200),
        ("GET", "/v1/compute/clusters/{cluster_id}", 200),
        ("GET", "/v1/compute/clusters/{cluster_id}", 404),
    ]
    sim.http.delete("/_sim/requests")
    assert sim.http.get("/_sim/requests").json()["total"] == 0


def test_request_log_keeps_each_put_body_as_it_arrived(sim: Sim) -> None:
    """A PUT's body is logged as its JSON, and one that is not JSON (answered 4xx) as its text:
    the log still answers."""
    cluster = sim.create()
    path = f"/v1/compute/clusters/{cluster.cluster_id}"
    sim.http.put(path, json={"num_gpus": 16})
    bad = sim.http.put(path, content=b"{not json", headers={"Content-Type": "application/json"})
    assert 400 <= bad.status_code < 500
    response = sim.http.get("/_sim/requests")
    assert response.status_code == 200
    puts = [r for r in response.json()["requests"] if r["method"] == "PUT"]
    assert [r.get("body") for r in puts] == [{"num_gpus": 16}, "{not json"]


def test_random_reclaims_follow_the_rate(tmp_path: Path) -> None:
    config = SimulatorConfig(time_scale=0, admin=True, reclaim_rate=2.0, seed=7)
    with TestClient(create_app(config), headers={"Authorization": f"Bearer {KEY}"}) as http:
        body = {**BASE, "num_preemptible_gpus": 16, "project_id": "p"}
        cid = http.post("/v1/compute/clusters", json=body).json()["cluster_id"]
        http.post("/_sim/clock/advance", json={"seconds": 360 + 6 * 3600})
        cluster = Cluster.model_validate(http.get(f"/v1/compute/clusters/{cid}").json())
    reclaims = [e for e in cluster.node_lifecycle_events or [] if e.is_preemption]
    assert len(reclaims) >= 5
    assert cluster.allocated_preemptible_gpus <= 16


def test_admin_endpoints_are_off_by_default() -> None:
    with TestClient(create_app(SimulatorConfig(time_scale=0))) as http:
        assert http.post("/_sim/clock/advance", json={"seconds": 1}).status_code == 404


def test_reclaim_takes_the_chosen_node_ids_and_names_an_unknown_one(sim: Sim) -> None:
    cluster = sim.ready(num_preemptible_gpus=16, project_id="proj-1")
    sim.advance(120)
    cid = cluster.cluster_id
    first, second = preemptible(sim.get(cid))
    chosen = sim.http.post(f"/_sim/clusters/{cid}/reclaim", json={"node_ids": [second]})
    assert chosen.json() == {"reclaimed": [second]}
    statuses = {n.node_id: n.status for n in sim.get(cid).gpu_worker_nodes}
    assert (statuses[first], statuses[second]) == ("Ready", "Draining")
    again = sim.http.post(f"/_sim/clusters/{cid}/reclaim", json={"node_ids": [second, "gpu-x"]})
    assert again.status_code == 400
    error = again.json()["error"]
    assert error["param"] == "node_ids"
    assert second in error["message"] and "gpu-x" in error["message"] and first in error["message"]
    assert {n.node_id: n.status for n in sim.get(cid).gpu_worker_nodes}[first] == "Ready"


def test_a_stopping_simulator_answers_503_so_no_script_adopts_it() -> None:
    """From the SIGTERM on (the runtime's `stopping`), scripts/demo.sh's readiness probe
    (`GET /v1/compute/regions`) fails, so `make demo` waits for it instead of using it."""
    app = create_app(SimulatorConfig(time_scale=0))
    with TestClient(app, headers={"Authorization": f"Bearer {KEY}"}) as http:
        assert http.get("/v1/compute/regions").status_code == 200
        app.state.runtime.stopping.set()
        stopping = http.get("/v1/compute/regions")
    assert stopping.status_code == 503
    assert "the simulator is stopping" in stopping.json()["error"]["message"]
