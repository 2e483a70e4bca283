"""The simulator's model of Together's `auto_scale`: bounds checked at create, scale-up for what
pending pods need (up to the ceiling), scale-down of a node idle for the unneeded window (never
below the floor), and the admin endpoint that moves the count inside the bounds."""

from __future__ import annotations

from typing import Any

import pytest

from tests.sim_app import Sim
from together_sim.autoscale import SCALE_DOWN_UNNEEDED_SECONDS, Demand, step, step_each
from together_sim.kube.demand import demand_of

AUTO = {"auto_scale": True, "auto_scale_max_gpus": 32}


def _world(sim: Sim) -> Any:
    return sim.app.state.runtime.world


def _standard(sim: Sim, cluster_id: str) -> list[str]:
    return [n.node_id for n in sim.get(cluster_id).gpu_worker_nodes if not n.is_preemptible]


def _full(sim: Sim, cluster_id: str) -> dict[str, int]:
    """Every standard Node shown in Kubernetes with no free GPU."""
    return dict.fromkeys(_standard(sim, cluster_id), 0)


def test_create_checks_the_autoscaling_ceiling(sim: Sim) -> None:
    for ceiling in (None, 12, 0):
        response = sim.http.post(
            "/v1/compute/clusters",
            json={"cluster_name": "t", "region": "us-central-8", "gpu_type": "H100_SXM",
                  "num_gpus": 8, "billing_type": "ON_DEMAND", "cuda_version": "12.8",
                  "nvidia_driver_version": "570", "auto_scale": True,
                  "auto_scale_max_gpus": ceiling},
        )  # fmt: skip
        assert response.status_code == 400, ceiling
        assert response.json()["error"]["param"] == "auto_scale_max_gpus"


def test_pending_pods_add_nodes_up_to_the_ceiling_and_idle_ones_go_after_the_window(
    sim: Sim,
) -> None:
    cid = sim.ready(**AUTO).cluster_id
    world = _world(sim)
    cluster = world.clusters[cid]
    step(world, cluster, Demand(pending=(8, 8, 4), free=_full(sim, cid)))  # 3 nodes' worth
    assert sim.get(cid).num_gpus == 32  # 8 + 24 = the ceiling
    step(world, cluster, Demand(pending=(8,) * 8))
    assert sim.get(cid).num_gpus == 32  # never above it
    sim.advance(120)  # booted
    nodes = _standard(sim, cid)
    assert len(nodes) == 4
    idle = frozenset(nodes[1:])  # the pods ran and finished; the first node keeps its work
    step(world, cluster, Demand(idle=idle))
    sim.advance(SCALE_DOWN_UNNEEDED_SECONDS - 1)
    step(world, cluster, Demand(idle=idle))
    assert sim.get(cid).num_gpus == 32  # not idle for the whole window yet
    sim.advance(1)
    step(world, cluster, Demand(idle=idle))
    assert sim.get(cid).num_gpus == 24  # one node per pass, the newest idle one
    assert _standard(sim, cid) == nodes[:3]
    for _ in range(5):
        step(world, cluster, Demand(idle=frozenset(_standard(sim, cid)[1:])))
    assert sim.get(cid).num_gpus == 8  # the floor, however idle
    assert _standard(sim, cid) == nodes[:1]


def test_a_marked_idle_node_goes_first(sim: Sim) -> None:
    cid = sim.ready(**AUTO, num_gpus=8).cluster_id
    world = _world(sim)
    step(world, world.clusters[cid], Demand(pending=(8, 8), free=_full(sim, cid)))
    sim.advance(SCALE_DOWN_UNNEEDED_SECONDS + 120)
    first, second, third = _standard(sim, cid)
    both = frozenset({second, third})
    step(world, world.clusters[cid], Demand(idle=both, marked=frozenset({second})))
    sim.advance(SCALE_DOWN_UNNEEDED_SECONDS)
    step(world, world.clusters[cid], Demand(idle=both, marked=frozenset({second})))
    assert _standard(sim, cid) == [first, third]


def test_nodes_kubernetes_does_not_show_ready_yet_are_on_their_way(sim: Sim) -> None:
    """Two pods wait for two nodes; once those boot, the pods still wait until the Nodes are
    mirrored and the scheduler binds them: no pass meanwhile adds more (was 8 -> 24 -> 40)."""
    cid = sim.ready(**{**AUTO, "auto_scale_max_gpus": 64}).cluster_id
    world = _world(sim)
    shown = _full(sim, cid)
    step(world, world.clusters[cid], Demand(pending=(8, 8), free=shown))
    assert sim.get(cid).num_gpus == 24
    step(world, world.clusters[cid], Demand(pending=(8, 8), free=shown))  # still booting
    sim.advance(120)
    step(world, world.clusters[cid], Demand(pending=(8, 8), free=shown))  # not mirrored yet
    assert sim.get(cid).num_gpus == 24
    mirrored = {**shown, **dict.fromkeys(_standard(sim, cid)[1:], 8)}
    step(world, world.clusters[cid], Demand(pending=(8, 8), free=mirrored))  # not bound yet
    assert sim.get(cid).num_gpus == 24


@pytest.mark.parametrize(
    ("pending", "free", "after"),
    [
        ((6, 6, 4), 0, 32),  # 6 and 6 fill two nodes' best; the 4 fits neither: three nodes
        ((4, 4, 4, 4), 0, 24),  # two to a node
        ((4,), 4, 8),  # fits the running node's free half: nothing added
        ((4, 6), 4, 16),
        ((16,), 0, 8),  # no 8-GPU node could run it
    ],
)
def test_pending_pods_are_packed_onto_8_gpu_nodes(
    sim: Sim, pending: tuple[int, ...], free: int, after: int
) -> None:
    cid = sim.ready(**{**AUTO, "auto_scale_max_gpus": 64}).cluster_id
    world = _world(sim)
    shown = dict.fromkeys(_standard(sim, cid), free)
    step(world, world.clusters[cid], Demand(pending=pending, free=shown))
    assert sim.get(cid).num_gpus == after


def test_without_auto_scale_nothing_moves(sim: Sim) -> None:
    cid = sim.ready(num_gpus=8).cluster_id
    step(_world(sim), _world(sim).clusters[cid], Demand(pending=(8,) * 8))
    assert sim.get(cid).num_gpus == 8
    assert (
        sim.http.post(f"/_sim/clusters/{cid}/autoscale", json={"num_gpus": 16}).status_code == 409
    )


def test_the_admin_endpoint_moves_the_count_only_inside_the_bounds(sim: Sim) -> None:
    cid = sim.ready(**AUTO).cluster_id
    url = f"/_sim/clusters/{cid}/autoscale"
    assert sim.http.post(url, json={"num_gpus": 24}).json()["num_gpus"] == 24
    for outside in (0, 40, 12):
        assert sim.http.post(url, json={"num_gpus": outside}).status_code == 400
    assert sim.get(cid).num_gpus == 24


@pytest.mark.parametrize(
    "body", [b"{}", b'{"num_gpus": "x"}', b'{"num_gpus": 16.5}', b'{"num_gpus": true}',
             b'{"num_gpus": null}', b'{"num_gpus": Infinity}'],
)  # fmt: skip
def test_the_admin_endpoint_names_the_field_of_a_bad_body(sim: Sim, body: bytes) -> None:
    cid = sim.ready(**AUTO).cluster_id
    response = sim.http.post(f"/_sim/clusters/{cid}/autoscale", content=body)
    assert response.status_code == 400, response.text
    assert response.json()["error"]["param"] == "num_gpus"
    assert sim.get(cid).num_gpus == 8


def _pod(name: str, *, node: str | None = None, gpus: int = 8, **spec: Any) -> dict[str, Any]:
    status: dict[str, Any] = {"phase": "Running" if node else "Pending"}
    if node is None:
        status["conditions"] = [
            {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}
        ]
    resources = {"limits": {"nvidia.com/gpu": str(gpus)}}
    return {
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"containers": [{"name": "c", "resources": resources}],
                 **({"nodeName": node} if node else {}), **spec},
        "status": status,
    }  # fmt: skip


def test_demand_counts_pods_a_standard_node_could_run_free_gpus_and_idle_standard_nodes() -> None:
    nodes: list[dict[str, Any]] = [
        {"metadata": {"name": "gpu-dp-a", "labels": {}}},
        {"metadata": {"name": "gpu-dp-b", "labels": {}}},
        {"metadata": {"name": "gpu-dp-d", "labels": {}}, "spec": {"unschedulable": True}},
        {"metadata": {"name": "gpu-dp-e", "labels": {}}},
        {"metadata": {"name": "gpu-preemptible-dp-c",
                      "labels": {"together.ai/compute-class": "preemptible"}}},
    ]  # fmt: skip
    pinned: dict[str, Any] = {"nodeSelector": {"together.ai/compute-class": "preemptible"}}
    daemon = _pod("ds", node="gpu-dp-b", gpus=0)
    daemon["metadata"]["ownerReferences"] = [{"kind": "DaemonSet", "name": "x"}]
    pods = [
        _pod("wait", gpus=8),
        _pod("wait-2", gpus=4),
        _pod("wait-cpu", gpus=0),  # asks for no GPU: no GPU node helps it
        _pod("burst", gpus=8, **pinned),  # only preemptible nodes may take it: not ours
        _pod("run", node="gpu-dp-a"),
        _pod("half", node="gpu-dp-e", gpus=4),
        daemon,  # a DaemonSet's pod does not keep a node busy
    ]
    assert demand_of(nodes, pods) == Demand(
        pending=(8, 4),
        free={"gpu-dp-a": 0, "gpu-dp-b": 8, "gpu-dp-d": 0, "gpu-dp-e": 4},  # d is cordoned
        idle=frozenset({"gpu-dp-b", "gpu-dp-d"}),
    )


def test_a_marked_node_with_work_is_not_taken(sim: Sim) -> None:
    cid = sim.ready(**AUTO, num_gpus=8).cluster_id
    world = _world(sim)
    step(world, world.clusters[cid], Demand(pending=(8, 8), free=_full(sim, cid)))
    sim.advance(120)
    first, busy, idle = _standard(sim, cid)
    demand = Demand(idle=frozenset({idle}), marked=frozenset({busy}))
    step(world, world.clusters[cid], demand)
    sim.advance(SCALE_DOWN_UNNEEDED_SECONDS)
    step(world, world.clusters[cid], demand)
    assert _standard(sim, cid) == [first, busy]


def test_the_window_restarts_when_a_node_runs_work_again(sim: Sim) -> None:
    cid = sim.ready(**AUTO, num_gpus=8).cluster_id
    world = _world(sim)
    step(world, world.clusters[cid], Demand(pending=(8,), free=_full(sim, cid)))
    sim.advance(120)
    first, second = _standard(sim, cid)
    step(world, world.clusters[cid], Demand(idle=frozenset({second})))
    sim.advance(SCALE_DOWN_UNNEEDED_SECONDS - 60)
    step(world, world.clusters[cid], Demand())  # a pod ran on it for a while
    sim.advance(60)
    step(world, world.clusters[cid], Demand(idle=frozenset({second})))
    sim.advance(SCALE_DOWN_UNNEEDED_SECONDS - 1)
    step(world, world.clusters[cid], Demand(idle=frozenset({second})))
    assert _standard(sim, cid) == [first, second]
    sim.advance(1)
    step(world, world.clusters[cid], Demand(idle=frozenset({second})))
    assert _standard(sim, cid) == [first]


def test_a_stale_idle_node_that_is_gone_takes_no_busy_node_with_it(sim: Sim) -> None:
    """The pass's idle set can name a node a PUT has removed since; the scale-down then waits
    rather than taking the newest node left, which has work."""
    cid = sim.ready(**AUTO, num_gpus=8).cluster_id
    world = _world(sim)
    step(world, world.clusters[cid], Demand(pending=(8, 8), free=_full(sim, cid)))
    sim.advance(120)
    first, busy, newest = _standard(sim, cid)
    stale = Demand(idle=frozenset({newest}))
    step(world, world.clusters[cid], stale)
    sim.advance(SCALE_DOWN_UNNEEDED_SECONDS)
    assert sim.put(cid, {"num_gpus": 16}).status_code == 200  # removes the newest
    assert _standard(sim, cid) == [first, busy]
    step(world, world.clusters[cid], stale)  # the mirror has not seen the removal yet
    assert _standard(sim, cid) == [first, busy]
    assert world.clusters[cid].autoscaler["idle_since"] == {}  # no memory of a gone node


def test_a_cluster_out_of_stock_waits_and_the_others_are_still_served(sim: Sim) -> None:
    """The hub's pass steps every cluster: a 409 from one scale-up must not stop the rest."""
    short = sim.ready(**AUTO, cluster_name="short").cluster_id
    served = sim.ready(**AUTO, cluster_name="served").cluster_id
    sim.capacity(standard_gpus=24)  # 16 in use: one more node's worth spare
    world = _world(sim)
    step_each(world, {
        short: Demand(pending=(8, 8), free=_full(sim, short)),  # two nodes: out of stock
        served: Demand(pending=(8,), free=_full(sim, served)),
    })  # fmt: skip
    assert (sim.get(short).num_gpus, sim.get(served).num_gpus) == (8, 16)
    assert world.clusters[short].autoscaler["waiting_for_capacity"]
    sim.capacity(standard_gpus=48)
    step_each(world, {short: Demand(pending=(8, 8), free=_full(sim, short))})
    assert sim.get(short).num_gpus == 24  # served once there is capacity
    assert "waiting_for_capacity" not in world.clusters[short].autoscaler
