"""What the simulator's Kubernetes side mirrors of the world, and when the API may call a cluster
Ready, as pure functions over the in-process simulator's frozen clock (no control plane):
`together_sim.plane.views.views_of`, `mirror.wanted_nodes`, `kwok_node_object`, `serves_nodes` and
`demand_for`.

The engine tests (tests/integration/test_kubernetes_sim.py) watch a real API server follow them.
"""

from __future__ import annotations

from tests.sim_app import GPU, Sim
from together_sim.kube.mirror import COMPUTE_CLASS_LABEL, demand_for, serves_nodes, wanted_nodes
from together_sim.kube.processes import NODE_LABEL
from together_sim.nodes.kwok import kwok_node_object
from together_sim.plane.views import ClusterView, views_of


def view(sim: Sim, cluster_id: str) -> ClusterView:
    with sim.app.state.runtime.transaction() as world:
        return views_of(world)[cluster_id]


def test_the_control_plane_starts_with_the_data_plane_and_nodes_come_with_ready(sim: Sim) -> None:
    cid = sim.create().cluster_id
    sim.advance(119)
    early = view(sim, cid)
    assert (early.data_plane_up, early.provisioned, wanted_nodes(early)) == (False, False, {})
    sim.advance(1)  # 2/6 of the 360 s: the cluster waits for its subnet
    provisioning = view(sim, cid)
    assert (provisioning.data_plane_up, provisioning.provisioned) == (True, False)
    assert wanted_nodes(provisioning) == {}  # its nodes are not up before it is Ready
    sim.advance(240)
    ready = view(sim, cid)
    assert ready.provisioned and not ready.gone
    assert list(wanted_nodes(ready)) == [n.node_id for n in sim.get(cid).gpu_worker_nodes]


def test_ready_waits_for_a_pass_that_mirrored_the_ready_world(sim: Sim) -> None:
    """A pass while the cluster provisioned mirrored no node: a client told Ready then would find
    none. Only a pass over the Ready world (its nodes created) lets the API say Ready."""
    cid = sim.create().cluster_id
    sim.advance(200)
    provisioning = view(sim, cid)
    sim.advance(160)
    ready = view(sim, cid)
    assert serves_nodes("running", ready)
    assert not serves_nodes("running", None)  # the API server answers, nothing mirrored yet
    assert not serves_nodes("running", provisioning)
    for state in ("starting", "failed", "stopped"):
        assert not serves_nodes(state, ready)


def test_a_reclaimed_node_is_mirrored_draining_with_its_reason_until_removed(sim: Sim) -> None:
    cid = sim.ready(num_preemptible_gpus=16, project_id="proj-1").cluster_id
    sim.advance(120)  # two fills
    (standard,) = (n for n in view(sim, cid).nodes if not n.preemptible)
    reclaimed = sim.http.post(f"/_sim/clusters/{cid}/reclaim", json={"nodes": 1}).json()
    (node_id,) = reclaimed["reclaimed"]
    draining = view(sim, cid)
    (node,) = (n for n in draining.nodes if n.node_id == node_id)
    assert (node.draining_since, node.drain_reason) == (draining.now, "TogetherPreemptionNotified")
    assert node.drain_message and node_id in wanted_nodes(draining)  # cordoned, not yet gone
    others = [n for n in draining.nodes if n.node_id != node_id]
    assert [(n.draining_since, n.drain_reason) for n in others] == [(None, "")] * 2
    sim.advance(300)  # the drain window
    removed = view(sim, cid)
    (gone,) = (n for n in removed.nodes if n.node_id == node_id)
    assert gone.removed and node_id not in wanted_nodes(removed)
    assert standard.node_id in wanted_nodes(removed)


def test_a_lowered_target_drains_the_surplus_as_a_scale_down(sim: Sim) -> None:
    cid = sim.ready(num_preemptible_gpus=16, project_id="proj-1").cluster_id
    sim.advance(120)
    sim.put(cid, {"num_preemptible_gpus": 8})
    reasons = [n.drain_reason for n in view(sim, cid).nodes if n.draining_since is not None]
    assert reasons == ["TogetherScaledDown"]


def test_a_node_object_carries_the_compute_class_only_on_preemptible_nodes(sim: Sim) -> None:
    cid = sim.ready(num_preemptible_gpus=8, project_id="proj-1").cluster_id
    sim.advance(60)
    ready = view(sim, cid)
    by_class = {n.preemptible: kwok_node_object(ready.gpu_type, n) for n in ready.nodes}
    preemptible, standard = by_class[True], by_class[False]
    assert preemptible["metadata"]["labels"][COMPUTE_CLASS_LABEL] == "preemptible"
    assert COMPUTE_CLASS_LABEL not in standard["metadata"]["labels"]
    for body in (preemptible, standard):
        assert body["status"]["allocatable"]["nvidia.com/gpu"] == "8"
        assert body["metadata"]["labels"]["node.kubernetes.io/instance-type"] == GPU
        assert body["metadata"]["labels"][NODE_LABEL] == "true"  # KWOK keeps it Ready


def test_a_deleting_cluster_is_gone(sim: Sim) -> None:
    cid = sim.ready().cluster_id
    assert sim.http.delete(f"/v1/compute/clusters/{cid}").status_code == 200
    assert view(sim, cid).gone


def test_demand_is_built_only_for_clusters_created_with_auto_scale(sim: Sim) -> None:
    plain = view(sim, sim.ready(cluster_name="plain").cluster_id)
    scaled = view(sim, sim.ready(cluster_name="scaled", auto_scale=True,
                                 auto_scale_max_gpus=16).cluster_id)  # fmt: skip
    assert (plain.auto_scale, scaled.auto_scale) == (False, True)
    nodes = [kwok_node_object(scaled.gpu_type, n) for n in wanted_nodes(scaled).values()]
    assert demand_for(plain, nodes, []) is None
    demand = demand_for(scaled, nodes, [])
    assert demand is not None and demand.idle == frozenset(wanted_nodes(scaled))
