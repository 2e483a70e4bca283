"""Which nodes a lowered count removes: Together's targeted scale-down, as a pure choice both a PUT
and the simulated autoscaler make (docs/kubernetes-sim.md, "Targeted scale-down")."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any, Protocol, TypeVar

from together_facts.values import TARGETED_SCALE_DOWN_ANNOTATION

__all__ = ["is_marked", "scale_down_order"]


class _Node(Protocol):
    @property
    def node_id(self) -> str: ...


N = TypeVar("N", bound=_Node)


def scale_down_order(active: Sequence[N], count: int, marked: Collection[str]) -> list[N]:
    """The ``count`` nodes of ``active`` (oldest first) to remove: the marked ones first, newest
    marked first, then the newest unmarked ones."""
    if count <= 0:
        return []
    newest_first = list(reversed(active))
    chosen = [n for n in newest_first if n.node_id in marked]
    chosen += [n for n in newest_first if n.node_id not in marked]
    return chosen[:count]


def is_marked(node: Mapping[str, Any]) -> bool:
    """A Kubernetes Node object that is cordoned and carries the annotation set to ``"true"``.

    Together's docs ("Targeted Scale-down") read "either cordon ... or add the annotation" in one
    bullet and "cordoned + annotated" in the last; this takes the stricter reading (both), so a
    node cordoned for another reason (a reclaim's T+0, a person's ``kubectl cordon``) is no mark."""
    annotations = (node.get("metadata") or {}).get("annotations") or {}
    cordoned = bool((node.get("spec") or {}).get("unschedulable"))
    return cordoned and str(annotations.get(TARGETED_SCALE_DOWN_ANNOTATION, "")).lower() == "true"
