"""The node interface: a simulated cluster's node is a KWOK node (a Node object KWOK keeps Ready)
or a real node (a kubelet and containerd, :mod:`together_sim.kube.realnode`); each is made by
``start`` and undone, everything it made, by one ``delete``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from together_sim.kube.client import KubeApi, KubeApiError
from together_sim.kube.pods import PodClock, gone

__all__ = ["KwokNode", "SimulatedNode"]

Obj = dict[str, Any]


class SimulatedNode(Protocol):
    """What the mirror asks of any node (kind's and kwokctl's node providers have this shape)."""

    kind: ClassVar[str]
    """``kwok`` or ``real``."""

    @property
    def name(self) -> str: ...

    def start(self) -> object: ...

    def delete(self) -> list[str]:
        """Undo everything the node made; returns what could not be undone (empty: all)."""
        ...


@dataclass
class KwokNode:
    """A Node object with ``together-sim/kwok=true``: KWOK keeps it Ready and runs nothing, so
    making it is a create (and the GPUs in its status) and removing it ends its pods (Failed,
    137: :meth:`PodClock.remove_with_node`) and deletes it."""

    kind: ClassVar[str] = "kwok"
    api: KubeApi
    body: Obj
    """The Node (``mirror.node_object``)."""
    pods: PodClock

    @property
    def name(self) -> str:
        name: str = self.body["metadata"]["name"]
        return name

    def start(self) -> Obj:
        """Create the Node (one that exists already, e.g. after a restart, is kept)."""
        try:
            created = self.api.create_node(self.body)
        except KubeApiError as exc:
            if exc.status != 409:
                raise
            return {"metadata": {"name": self.name, "annotations": {}}}
        if not created.get("status", {}).get("allocatable", {}).get("nvidia.com/gpu"):
            status = {"status": self.body["status"]}
            created = self.api.patch_node(self.name, status, status=True)
        return created

    def delete(self) -> list[str]:
        on_it = [p for p in self.api.pods() if p["spec"].get("nodeName") == self.name]
        self.pods.remove_with_node([p for p in on_it if not gone(p)])
        self.api.delete_node(self.name)
        return []
