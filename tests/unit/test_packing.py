"""First-fit-decreasing packing of pending pods onto 8-GPU nodes, shared by both autoscalers."""

from __future__ import annotations

import pytest

from together_facts.packing import nodes_to_add


@pytest.mark.parametrize(
    ("requests", "free", "added"),
    [
        ([], [], 0),
        ([8, 8], [], 2),
        ([4, 4, 4], [], 2),  # two to a node
        ([6, 6, 4], [], 3),  # the 4 fits neither 6's node: ceil(16 / 8) would say 2
        ([4, 6, 2, 4], [], 2),  # largest first: 6+2, 4+4
        ([8], [8], 0),  # a node on its way takes it
        ([4], [4, 0], 0),  # a Ready node's free half
        ([8], [4, 4], 1),  # free GPUs split over nodes do not make one node
    ],
)
def test_nodes_to_add(requests: list[int], free: list[int], added: int) -> None:
    assert nodes_to_add(requests, free) == added


def test_a_pod_larger_than_a_node_is_the_callers_to_set_aside() -> None:
    with pytest.raises(ValueError, match="16 GPUs"):
        nodes_to_add([16], [])
