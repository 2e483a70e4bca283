"""Pending pods packed onto 8-GPU nodes, as the Cluster Autoscaler simulates the scheduler. Pure.
Here so that both autoscalers (the simulator's ``auto_scale`` of standard nodes and
``together_autoscaler`` of preemptible ones) count the nodes a burst still needs the same way."""

from __future__ import annotations

from collections.abc import Iterable

from together_facts.values import GPUS_PER_NODE

__all__ = ["nodes_to_add"]


def nodes_to_add(
    requests: Iterable[int], free: Iterable[int], node_gpus: int = GPUS_PER_NODE
) -> int:
    """New nodes of ``node_gpus`` GPUs needed so that every request (a pod's GPUs) has room,
    after first-fit-decreasing packing onto the ``free`` GPUs of the nodes there already.

    Every request must fit one node (a caller sets larger ones aside: no node could run them).
    Which free GPUs count is the caller's to say (Ready nodes' spare GPUs, nodes on their way as
    whole nodes); the packing is the same first fit, largest pod first."""
    bins = list(free)
    opened = 0
    for gpus in sorted(requests, reverse=True):
        if gpus > node_gpus:
            raise ValueError(f"a pod requesting {gpus} GPUs fits no {node_gpus}-GPU node")
        for i, room in enumerate(bins):
            if gpus <= room:
                bins[i] = room - gpus
                break
        else:
            bins.append(node_gpus - gpus)
            opened += 1
    return opened
