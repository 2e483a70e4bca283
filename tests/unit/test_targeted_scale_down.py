"""Targeted scale-down as a pure choice: marked nodes go first, else the newest surplus."""

from __future__ import annotations

from typing import Any

import pytest

from together_api.values import TARGETED_SCALE_DOWN_ANNOTATION
from together_sim.model import SimNode, World
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
    from together_sim.model import SimCluster

    world = World()
    cluster = SimCluster(
        cluster_id="c", cluster_name="c", cluster_type="KUBERNETES", region="r",
        gpu_type="H100_SXM", billing_type="ON_DEMAND", project_id="p", cuda_version="",
        nvidia_driver_version="", nvidia_version_id="", num_gpus=16, created_at=0.0,
        desired_preemptible_gpus=24, nodes=_nodes("p1", "p2", "p3"),
    )  # fmt: skip
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
