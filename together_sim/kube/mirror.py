"""One cluster's control plane and the thread that keeps it mirroring the simulated world, so what
``kubectl`` shows (Nodes, drains, volumes) is what the API says, on the simulator's clock."""

from __future__ import annotations

import logging
import shutil
import threading
from dataclasses import dataclass
from typing import Any, Final

import httpx

from together_facts.values import COMPUTE_CLASS_LABEL, GPUS_PER_NODE, PREEMPTIBLE
from together_sim.autoscale import Demand
from together_sim.kube.client import KubeApi, KubeApiError
from together_sim.kube.demand import demand_of
from together_sim.kube.pods import PodClock, terminal
from together_sim.kube.processes import NODE_LABEL, ControlPlane
from together_sim.kube.views import ClusterView, NodeView, VolumeView
from together_sim.targeting import is_marked

__all__ = [
    "COMPUTE_CLASS_LABEL",
    "ClusterMirror",
    "MirrorStatus",
    "demand_for",
    "serves_nodes",
    "wanted_nodes",
]

DRAIN_STARTED: Final = "together-sim/drain-started"
VOLUME_LABEL: Final = "together-sim/shared-volume"
PASS_SECONDS: Final = 0.2

log = logging.getLogger("together_sim.kube")
Obj = dict[str, Any]


def node_object(view: ClusterView, node: NodeView) -> Obj:
    labels = {
        NODE_LABEL: "true",
        "kubernetes.io/hostname": node.node_id,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "node.kubernetes.io/instance-type": view.gpu_type,
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


def volume_object(volume: VolumeView) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {
            "name": volume.volume_name,
            "labels": {VOLUME_LABEL: "true"},
            "annotations": {"together-sim/volume-id": volume.volume_id},
        },
        "spec": {
            "capacity": {"storage": f"{volume.size_tib}Ti"},
            "accessModes": ["ReadWriteMany"],
            "persistentVolumeReclaimPolicy": "Retain",
            "storageClassName": "",
            # Nothing mounts it (no container runs): the source only names the volume.
            "csi": {"driver": "shared-volume.together-sim", "volumeHandle": volume.volume_id},
        },
    }


def wanted_nodes(view: ClusterView) -> dict[str, NodeView]:
    """The Nodes the API server should hold: every simulated node that is up and not removed."""
    return {n.node_id: n for n in view.nodes if n.ready and not n.removed}


def demand_for(view: ClusterView, nodes: list[Obj], pods: list[Obj]) -> Demand | None:
    """What the pass shows Together's autoscaler; None (nothing built) for a cluster without
    ``auto_scale``, which no autoscaler steps on."""
    return demand_of(nodes, pods) if view.auto_scale else None


def serves_nodes(state: str, mirrored: ClusterView | None) -> bool:
    """Whether the API may call the cluster Ready: its control plane answers and a complete pass
    mirrored a world in which the cluster was Ready, so its first nodes are in the API server.
    (A pass before that, while it provisions, mirrored no node yet.)"""
    return state == "running" and mirrored is not None and mirrored.provisioned


@dataclass
class MirrorStatus:
    state: str  # starting | running | failed | stopped
    server: str
    start_seconds: float | None
    pids: dict[str, int]
    mirrored_at: float | None
    """The simulated time of the world the last complete pass mirrored (a sync point for tests)."""
    error: str = ""
    passes: int = 0
    """Complete passes so far: with a frozen clock ``mirrored_at`` stays put, and a test waits
    for two more than it saw (one of them started after it asked)."""


class ClusterMirror:
    """Starts the control plane in its own thread (its processes die with that thread), then
    mirrors the latest :class:`ClusterView` until :meth:`stop`.

    Mirrored, on every pass (about five a second, on the simulator's clock):

    * **Nodes.** One Node per simulated node that is up, named as the API names it, with label
      ``together.ai/compute-class=preemptible`` on preemptible nodes and no compute-class label on
      standard ones (Together documents the label only on preemptible nodes), ``nvidia.com/gpu: 8``
      allocatable, and ``together-sim/kwok=true`` so KWOK keeps it Ready. A node the world removed
      is deleted, and what still runs on it goes with it.
    * **Drains.** When the world starts draining a node (a reclaim, ``TogetherPreemptionNotified``,
      or a lowered preemptible target, ``TogetherScaledDown``) the Node is cordoned, a Warning Event
      with that reason is recorded on it, and its pods are stopped (:mod:`together_sim.kube.pods`).
      The simulated T+0 is kept in the Node's annotation ``together-sim/drain-started``.
    * **Targeted scale-down marks**, read the other way: :meth:`ClusterMirror.marked_nodes` asks the
      API server, when a PUT lowers a count, which Nodes are cordoned and annotated
      ``node.together.ai/delete-node-on-scale-down: "true"`` (:mod:`together_sim.targeting`).
    * **Demand**, read the other way for Together's autoscaler, on clusters created with
      ``auto_scale`` only: the GPUs each Unschedulable pod asks of a standard node, the free GPUs of
      each standard Node and the idle ones (:mod:`together_sim.kube.demand`), handed to the world by
      the hub.
    * **Shared volumes.** Each attached volume is a static ``ReadWriteMany`` PersistentVolume named
      after the volume (storage class ``""``), so a claim naming it binds.
    """

    def __init__(self, plane: ControlPlane, view: ClusterView) -> None:
        self.plane = plane
        self._view = view
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._state = "starting"
        self._error = ""
        self._remove = False
        self._mirrored: ClusterView | None = None
        """The view the last complete pass mirrored."""
        self._demand: Demand | None = None
        self._passes = 0
        self._thread = threading.Thread(
            target=self._run, name=f"kube-{view.cluster_id[:8]}", daemon=True
        )

    def start(self) -> ClusterMirror:
        self._thread.start()
        return self

    def offer(self, view: ClusterView) -> None:
        with self._lock:
            self._view = view

    def stop(self, *, remove: bool = False) -> None:
        """Ask the thread to stop its processes; ``remove`` also deletes the cluster's files."""
        self._remove = self._remove or remove
        self._stopping.set()
        self.plane.cancelled.set()
        if remove and self._thread.ident is not None and not self._thread.is_alive():
            shutil.rmtree(self.plane.root, ignore_errors=True)

    def join(self, timeout: float = 30.0) -> None:
        self._thread.join(timeout)

    @property
    def serving(self) -> bool:
        """The API server answers and holds the nodes the cluster had when it became Ready."""
        return serves_nodes(self._state, self._mirrored)

    def take_demand(self) -> Demand | None:
        """What the last pass saw for Together's autoscaler, once (None: nothing new)."""
        with self._lock:
            demand, self._demand = self._demand, None
        return demand

    def marked_nodes(self) -> frozenset[str]:
        """The Nodes marked for targeted scale-down, read from the API server now (its own
        connection: the mirror's belongs to the mirror's thread). None marked while it does not
        serve, or when it cannot be asked: the scale-down then takes the newest surplus."""
        if not self.serving:
            return frozenset()
        try:
            with self.plane.http_client(timeout=5.0) as http:
                nodes = KubeApi(http).nodes(f"{NODE_LABEL}=true")
        except (httpx.HTTPError, KubeApiError) as exc:
            log.warning("cluster %s: reading scale-down marks: %s", self._view.cluster_id, exc)
            return frozenset()
        return frozenset(n["metadata"]["name"] for n in nodes if is_marked(n))

    def status(self) -> MirrorStatus:
        # A copy: the mirror's thread adds processes while it starts them.
        processes = list(self.plane.processes.items())
        pids = {name: p.pid for name, p in processes if p.poll() is None}
        return MirrorStatus(
            state=self._state,
            server=self.plane.server,
            start_seconds=self.plane.start_seconds,
            pids=pids,
            mirrored_at=self._mirrored.now if self._mirrored is not None else None,
            error=self._error,
            passes=self._passes,
        )

    # ------------------------------------------------------------------- thread

    def _run(self) -> None:
        try:
            self.plane.start()
            self._state = "running"
            log.info(
                "cluster %s: control plane up in %.1f s at %s",
                self._view.cluster_id,
                self.plane.start_seconds,
                self.plane.server,
            )
            with self.plane.http_client() as http:
                api = KubeApi(http)
                pods = PodClock(api)
                while not self._stopping.wait(PASS_SECONDS):
                    with self._lock:
                        view = self._view
                    try:
                        self._mirror(api, pods, view)
                        self._mirrored = view
                        self._passes += 1
                    except (httpx.HTTPError, KubeApiError) as exc:
                        log.warning("cluster %s: %s", view.cluster_id, exc)
        except Exception as exc:  # a control plane that cannot start must not kill the simulator
            if not self._stopping.is_set():
                self._state, self._error = "failed", str(exc)
                log.error("cluster %s: control plane failed: %s", self._view.cluster_id, exc)
        finally:
            self.plane.stop()
            if self._state != "failed":
                self._state = "stopped"
            if self._remove:
                shutil.rmtree(self.plane.root, ignore_errors=True)

    def _mirror(self, api: KubeApi, pods: PodClock, view: ClusterView) -> None:
        live = {n["metadata"]["name"]: n for n in api.nodes(f"{NODE_LABEL}=true")}
        wanted = wanted_nodes(view)
        for node_id, node in wanted.items():
            if node_id not in live:
                live[node_id] = self._create_node(api, view, node)
        drains: dict[str, float] = {}
        for node in view.nodes:
            k8s = live.get(node.node_id)
            if node.draining_since is None or k8s is None:
                continue
            if DRAIN_STARTED not in (k8s["metadata"].get("annotations") or {}):
                self._cordon(api, k8s, node)
            drains[node.node_id] = node.draining_since
        all_pods = api.pods()
        pods.step(view.now, all_pods, drains)
        demand = demand_for(view, [live[n] for n in live if n in wanted], all_pods)
        if demand is not None:
            with self._lock:
                self._demand = demand
        for name in set(live) - set(wanted):
            leftovers = [
                p for p in api.pods() if p["spec"].get("nodeName") == name and not _gone(p)
            ]
            pods.remove_with_node(leftovers)
            api.delete_node(name)
        self._mirror_volumes(api, view)

    @staticmethod
    def _create_node(api: KubeApi, view: ClusterView, node: NodeView) -> Obj:
        body = node_object(view, node)
        try:
            created = api.create_node(body)
        except KubeApiError as exc:
            if exc.status != 409:
                raise
            return {"metadata": {"name": node.node_id, "annotations": {}}}
        if not created.get("status", {}).get("allocatable", {}).get("nvidia.com/gpu"):
            created = api.patch_node(node.node_id, {"status": body["status"]}, status=True)
        return created

    @staticmethod
    def _cordon(api: KubeApi, k8s: Obj, node: NodeView) -> None:
        """T+0 of a drain: cordon, then the Warning Event (pods are stopped by the pod pass)."""
        name = k8s["metadata"]["name"]
        assert node.draining_since is not None
        api.patch_node(name, {
            "metadata": {"annotations": {DRAIN_STARTED: repr(node.draining_since)}},
            "spec": {"unschedulable": True},
        })  # fmt: skip
        api.node_event(
            k8s, reason=node.drain_reason or "TogetherScaledDown", message=node.drain_message
        )

    @staticmethod
    def _mirror_volumes(api: KubeApi, view: ClusterView) -> None:
        have = {v["metadata"]["name"] for v in api.persistent_volumes(f"{VOLUME_LABEL}=true")}
        want = {v.volume_name: v for v in view.volumes}
        for name, volume in want.items():
            if name not in have:
                api.create_persistent_volume(volume_object(volume))
        for name in have - set(want):
            api.delete_persistent_volume(name)


def _gone(pod: Obj) -> bool:
    return terminal(pod) and not pod["metadata"].get("finalizers")
