"""Targeted scale-down as a pure choice: marked nodes go first, else the newest surplus; the
marks are read only for a PUT that lowers a count."""

from __future__ import annotations

from typing import Any

import pytest

from tests.sim_app import Sim
from together_api.wire import ClusterUpdateRequest
from together_facts.values import TARGETED_SCALE_DOWN_ANNOTATION
from together_sim.clusters.operations import lowers
from together_sim.clusters.state import SimCluster, SimNode
from together_sim.model import World
from together_sim.requests import SimCreateRequest
from together_sim.targeting import is_marked, scale_down_order


def _nodes(*names: str) -> list[SimNode]:
    """Oldest first, as the simulator keeps them."""
    return [SimNode(node_id=n, preemptible=True, created_at=i, ready_at=i)
            for i, n in enumerate(names)]  # fmt: skip


def _ids(nodes: list[SimNode]) -> list[str]:
    return [n.node_id for n in nodes]


@pytest.mark.parametrize(
    ("count", "marked", "removed"),
    [
        (1, set(), ["d"]),  # no mark: the newest
        (2, set(), ["d", "c"]),
        (1, {"a"}, ["a"]),  # the marked oldest, not the newest
        (2, {"a"}, ["a", "d"]),  # the mark first, then the newest unmarked
        (1, {"a", "c"}, ["c"]),  # more marks than the count: the newest marked
        (3, {"b", "c"}, ["c", "b", "d"]),
        (0, {"a"}, []),  # nothing lowered: a mark alone removes nothing
        (-1, set(), []),
        (1, {"gone"}, ["d"]),  # a mark on a node not in the list is no mark
    ],
)
def test_scale_down_order(count: int, marked: set[str], removed: list[str]) -> None:
    assert _ids(scale_down_order(_nodes("a", "b", "c", "d"), count, marked)) == removed


def _node(*, cordoned: bool, value: str | None) -> dict[str, Any]:
    annotations = {} if value is None else {TARGETED_SCALE_DOWN_ANNOTATION: value}
    return {"metadata": {"name": "n", "annotations": annotations},
            "spec": {"unschedulable": True} if cordoned else {}}  # fmt: skip


@pytest.mark.parametrize(
    ("cordoned", "value", "marked"),
    [
        (True, "true", True),
        (True, "True", True),
        (True, None, False),  # cordoned for another reason (a reclaim's T+0, kubectl cordon)
        (False, "true", False),  # annotated but still schedulable
        (True, "false", False),
    ],
)
def test_a_mark_is_a_cordon_and_the_annotation(
    cordoned: bool, value: str | None, marked: bool
) -> None:
    assert is_marked(_node(cordoned=cordoned, value=value)) is marked


def test_the_world_drains_the_marked_node_and_falls_back_to_the_newest() -> None:
    """`World.set_preemptible_target` and `scale_standard` use the choice (no HTTP needed)."""
    world = World()
    cluster = _cluster(16, 24)
    cluster.nodes = _nodes("p1", "p2", "p3")
    cluster.nodes += [
        SimNode(node_id=s, preemptible=False, created_at=0, ready_at=0) for s in ("s1", "s2")
    ]
    world.clusters["c"] = cluster
    world.set_preemptible_target(cluster, 16, marked={"p1"})
    assert [n.node_id for n in cluster.nodes if n.draining_since is not None] == ["p1"]
    world.set_preemptible_target(cluster, 8)
    assert [n.node_id for n in cluster.nodes if n.draining_since is not None] == ["p1", "p3"]
    world.scale_standard(cluster, 8, marked={"s1"})
    assert [n.node_id for n in cluster.nodes if not n.preemptible] == ["s2"]


def _cluster(num_gpus: int, preemptible: int) -> SimCluster:
    spec = SimCreateRequest(
        cluster_name="c", cluster_type="KUBERNETES", region="r", gpu_type="H100_SXM",
        billing_type="ON_DEMAND", project_id="p", num_gpus=num_gpus,
        num_preemptible_gpus=preemptible,
    )  # fmt: skip
    return SimCluster(cluster_id="c", spec=spec, created_at=0.0)


@pytest.mark.parametrize(
    ("body", "lowering"),
    [
        ({"num_gpus": 8}, True),
        ({"num_preemptible_gpus": 8}, True),
        ({"num_gpus": 24, "num_preemptible_gpus": 8}, True),  # one count lowered is enough
        ({"num_gpus": 16}, False),  # the same count
        ({"num_gpus": 24}, False),  # raised
        ({"num_preemptible_gpus": 24}, False),
        ({"cluster_type": "KUBERNETES"}, False),  # no count at all
    ],
)
def test_lowers(body: dict[str, Any], lowering: bool) -> None:
    assert lowers(_cluster(16, 16), ClusterUpdateRequest(**body)) is lowering


class _Hub:
    """The kube hub as the update route sees it, counting the reads of the marks."""

    def __init__(self) -> None:
        self.reads = 0

    def marked_nodes(self, cluster_id: str) -> frozenset[str]:
        self.reads += 1
        return frozenset()

    def serving(self, cluster_id: str) -> bool:
        return True

    def kube_config(self, cluster_id: str) -> None:
        return None

    def poke(self) -> None:
        pass


def test_the_marks_are_read_only_when_a_put_lowers_a_count(sim: Sim) -> None:
    """A raise or a PUT of other fields asks the cluster's API server nothing."""
    cid = sim.ready(num_gpus=16).cluster_id
    hub = _Hub()
    sim.app.state.runtime.kube = hub
    assert sim.put(cid, {"num_gpus": 24}).status_code == 200
    assert sim.put(cid, {"num_gpus": 24}).status_code == 200
    assert hub.reads == 0
    assert sim.put(cid, {"num_gpus": 16}).status_code == 200
    assert hub.reads == 1
