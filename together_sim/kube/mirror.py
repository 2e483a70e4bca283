"""One cluster's control plane and the thread that keeps it mirroring the simulated world, so what
``kubectl`` shows (Nodes, drains, volumes) is what the API says, on the simulator's clock."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import httpx

from together_facts.values import COMPUTE_CLASS_LABEL
from together_sim.autoscale import Demand
from together_sim.host.mounts import remove_tree
from together_sim.kube.demand import demand_of
from together_sim.kube.processes import ControlPlane
from together_sim.nodes import DRAIN_STARTED, NODE_LABEL, drain_node
from together_sim.nodes.provider import NodeProvider
from together_sim.plane.client import KubeApi, KubeApiError
from together_sim.plane.pods import PodClock
from together_sim.plane.views import ClusterView, NodeView, VolumeView
from together_sim.targeting import is_marked

__all__ = [
    "COMPUTE_CLASS_LABEL",
    "ClusterMirror",
    "MirrorStatus",
    "demand_for",
    "serves_nodes",
    "wanted_nodes",
]

VOLUME_LABEL: Final = "together-sim/shared-volume"
PASS_SECONDS: Final = 0.2
SIM_NODES: Final = NODE_LABEL
"""Every Node the simulator made carries the key: ``true`` on KWOK nodes (KWOK keeps those),
``false`` on real ones (their kubelet does)."""

log = logging.getLogger(__name__)
Obj = dict[str, Any]


def volume_object(volume: VolumeView, path: Path | None = None) -> Obj:
    """The volume's PersistentVolume: a ``hostPath`` at ``path`` (the volume's directory, which
    every real node's pods mount), else a source that only names the volume."""
    source: Obj = (
        {"hostPath": {"path": str(path), "type": "Directory"}}
        if path is not None
        else {"csi": {"driver": "shared-volume.together-sim", "volumeHandle": volume.volume_id}}
    )
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
            **source,
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
    real_nodes: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Each real node of the cluster: its slot, state, start time, pids and address."""


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
      with that reason is recorded on it, and its pods are stopped (:mod:`together_sim.plane.pods`).
      The simulated T+0 is kept in the Node's annotation ``together-sim/drain-started``.
    * **Targeted scale-down marks**, read the other way: :meth:`ClusterMirror.marked_nodes` asks the
      API server, when a PUT lowers a count, which Nodes are cordoned and annotated
      ``node.together.ai/delete-node-on-scale-down: "true"`` (:mod:`together_sim.targeting`).
    * **Demand**, read the other way for Together's autoscaler, on clusters created with
      ``auto_scale`` only: the GPUs each Unschedulable pod asks of a standard node, the free GPUs of
      each standard Node and the idle ones (:mod:`together_sim.kube.demand`), handed to the world by
      the hub.
    * **Shared volumes.** Each attached volume is a static ``ReadWriteMany`` PersistentVolume named
      after the volume (storage class ``""``), so a claim naming it binds; its ``hostPath`` is the
      volume's directory, which real nodes' pods mount.
    * **Nodes are the provider's** (:class:`~together_sim.nodes.provider.NodeProvider`): it
      makes each one real while the pool (``--real-nodes``) has a free slot, else a KWOK node,
      and deletes it. A real node's pods are only evicted on a drain (its kubelet sends the
      SIGTERM), and it leaves the host once its ``may_go`` says its pods' grace periods, in real
      seconds, allow.
    """

    def __init__(
        self,
        plane: ControlPlane,
        view: ClusterView,
        nodes: NodeProvider,
        volumes_dir: Path | None = None,
    ) -> None:
        self.plane = plane
        self.nodes = nodes
        self.volumes_dir = volumes_dir
        self._view = view
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._wake = threading.Event()
        """Set by :meth:`offer` when the cluster changed, and by :meth:`stop`: pass now. Set from
        the start, so the first pass runs as soon as the control plane is up."""
        self._wake.set()
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
        """The cluster as the world has it now. A change (a node drains, comes or goes, see
        :meth:`ClusterView.changed_from`) wakes the thread for a pass now; the clock alone waits
        for the next tick, or every hub pass would be a mirror pass (API-server calls)."""
        with self._lock:
            changed = view.changed_from(self._view)
            self._view = view
        if changed:
            self._wake.set()

    def stop(self, *, remove: bool = False) -> None:
        """Ask the thread to stop its processes; ``remove`` also deletes the cluster's files."""
        self._remove = self._remove or remove
        self._stopping.set()
        self._wake.set()  # a thread waiting for its tick sees the stop now
        self.plane.cancelled.set()
        if remove and self._thread.ident is not None and not self._thread.is_alive():
            remove_tree(self.plane.root)

    def join(self, timeout: float = 30.0) -> None:
        self._thread.join(timeout)

    @property
    def serving(self) -> bool:
        """The API server answers and holds the nodes the cluster had when it became Ready
        (a real node once its kubelet registered it)."""
        return serves_nodes(self._state, self._mirrored) and not self.nodes.registering

    def release_real_nodes(self) -> None:
        """Remove every real node of the cluster from the host (the cluster or the simulator
        is going); safe from any thread, and more than once."""
        self.nodes.release()

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
                nodes = KubeApi(http).nodes(SIM_NODES)
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
            real_nodes=self.nodes.status(),
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
                while not self._stopping.is_set():
                    self._wake.wait(PASS_SECONDS)
                    self._wake.clear()  # before the pass: an offer during it is one more pass
                    if not self._stopping.is_set():
                        self._pass(api, pods)
        except Exception as exc:  # a control plane that cannot start must not kill the simulator
            if not self._stopping.is_set():
                self._state, self._error = "failed", str(exc)
                log.error("cluster %s: control plane failed: %s", self._view.cluster_id, exc)
        finally:
            self.release_real_nodes()
            self.plane.stop()
            if self._state != "failed":
                self._state = "stopped"
            if self._remove:
                remove_tree(self.plane.root)

    def _pass(self, api: KubeApi, pods: PodClock) -> None:
        """One pass over the latest view. Only :meth:`stop` ends the loop: a pass that raises
        is logged and the next one runs (an API server that does not answer is a warning, as
        it is expected while it stops; anything else with its traceback, SystemExit too, which
        would end the thread silently)."""
        with self._lock:
            view = self._view
        try:
            self._mirror(api, pods, view)
            self._mirrored = view
            self._passes += 1
        except (httpx.HTTPError, KubeApiError) as exc:
            log.warning("cluster %s: %s", view.cluster_id, exc)
        except BaseException:
            log.exception("cluster %s: mirroring pass failed", view.cluster_id)

    def _mirror(self, api: KubeApi, pods: PodClock, view: ClusterView) -> None:
        live = self._live(api)
        wanted = wanted_nodes(view)
        self.nodes.prune(api, pods, live, set(wanted))  # first: a removal frees a slot
        made = [
            self.nodes.make(api, pods, view.gpu_type, node, set(wanted))
            for node_id, node in wanted.items()
            if node_id not in live and not self.nodes.has(node_id)
        ]
        if any(made):
            live = self._live(api)
        self.nodes.adopt(api, live)
        drains: dict[str, float] = {}
        for node in view.nodes:
            k8s = live.get(node.node_id)
            if node.draining_since is None or k8s is None:
                continue
            if DRAIN_STARTED not in (k8s["metadata"].get("annotations") or {}):
                reason = node.drain_reason or "TogetherScaledDown"
                drain_node(api, k8s, node.draining_since, reason, node.drain_message)
            drains[node.node_id] = node.draining_since
            self.nodes.draining(node.node_id)
        all_pods = api.pods()
        pods.step(view.now, all_pods, drains, real=set(self.nodes.with_kubelet()))
        demand = demand_for(view, [live[n] for n in live if n in wanted], all_pods)
        if demand is not None:
            with self._lock:
                self._demand = demand
        for name in set(live) - set(wanted) - self.nodes.with_kubelet():
            self.nodes.delete(api, pods, live[name])
        self._mirror_volumes(api, view)

    @staticmethod
    def _live(api: KubeApi) -> dict[str, Obj]:
        """The simulator's Nodes as the API server lists them, by name."""
        return {n["metadata"]["name"]: n for n in api.nodes(SIM_NODES)}

    def _mirror_volumes(self, api: KubeApi, view: ClusterView) -> None:
        have = {v["metadata"]["name"] for v in api.persistent_volumes(f"{VOLUME_LABEL}=true")}
        want = {v.volume_name: v for v in view.volumes}
        for name, volume in want.items():
            if name not in have:
                path = None
                if self.volumes_dir is not None:
                    path = self.volumes_dir / volume.volume_id
                    path.mkdir(parents=True, exist_ok=True)
                api.create_persistent_volume(volume_object(volume, path))
        for name in have - set(want):
            api.delete_persistent_volume(name)
