"""A KWOK node: a Node object KWOK keeps Ready, running nothing; made by a create and undone by
ending its pods and deleting it (:class:`together_sim.nodes.SimNode`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from together_facts.values import COMPUTE_CLASS_LABEL, GPUS_PER_NODE, PREEMPTIBLE
from together_sim.nodes import NODE_LABEL
from together_sim.plane.client import KubeApi, KubeApiError
from together_sim.plane.pods import PodClock, gone
from together_sim.plane.views import NodeView

__all__ = ["KwokNode", "kwok_node_object", "remove_node_object"]

Obj = dict[str, Any]


def kwok_node_object(gpu_type: str, node: NodeView) -> Obj:
    """The Node of a KWOK node: named as the API names it, ``together-sim/kwok=true`` (so KWOK
    keeps it Ready), the compute-class label on a preemptible node only (Together documents it
    only there) and ``nvidia.com/gpu: 8`` allocatable."""
    labels = {
        NODE_LABEL: "true",
        "kubernetes.io/hostname": node.node_id,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "node.kubernetes.io/instance-type": gpu_type,
    }
    if node.preemptible:
        labels[COMPUTE_CLASS_LABEL] = PREEMPTIBLE
    resources = {
        "cpu": "208",
        "memory": "2048Gi",
        "ephemeral-storage": "1Ti",
        "pods": "110",
        "nvidia.com/gpu": str(GPUS_PER_NODE),
    }
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": node.node_id,
            "labels": labels,
            "annotations": {"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
        },
        "spec": {},
        "status": {"capacity": resources, "allocatable": resources},
    }


@dataclass
class KwokNode:
    """A Node object with ``together-sim/kwok=true``: KWOK keeps it Ready and runs nothing, so
    making it is a create (and the GPUs in its status) and removing it ends its pods (Failed,
    137: :meth:`PodClock.remove_with_node`) and deletes it."""

    api: KubeApi
    body: Obj
    """The Node (:func:`kwok_node_object`); once made, as the API server answered."""
    pods: PodClock

    @property
    def name(self) -> str:
        name: str = self.body["metadata"]["name"]
        return name

    def make(self) -> KwokNode:
        """Create the Node (one that exists already, e.g. after a restart, is kept)."""
        try:
            created = self.api.create_node(self.body)
        except KubeApiError as exc:
            if exc.status != 409:
                raise
            return self
        if not created.get("status", {}).get("allocatable", {}).get("nvidia.com/gpu"):
            status = {"status": self.body["status"]}
            created = self.api.patch_node(self.name, status, status=True)
        self.body = created
        return self

    def ready(self, k8s: Obj | None) -> bool:
        return k8s is not None  # KWOK keeps it Ready

    @property
    def failure(self) -> str:
        return ""  # a create that fails raises

    def may_go(self, pods: list[Obj], drained_at: float | None, now: float) -> bool:
        return True  # the pod clock ends its pods on the simulated clock

    def delete(self) -> list[str]:
        remove_node_object(self.api, self.pods, self.name)
        return []

    def status(self) -> dict[str, Any]:
        return {"state": "kwok"}  # KWOK's own process runs it: nothing of its own to show


def remove_node_object(api: KubeApi, pods: PodClock, name: str) -> None:
    """What a node leaves in the API server: its pods end (Failed, 137, as on a node that
    vanished) and its Node goes."""
    on_it = [p for p in api.pods() if p["spec"].get("nodeName") == name]
    pods.remove_with_node([p for p in on_it if not gone(p)])
    api.delete_node(name)
