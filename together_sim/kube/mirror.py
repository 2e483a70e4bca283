"""One cluster's control plane and the thread that keeps it mirroring the simulated world, so what
``kubectl`` shows (Nodes, drains, volumes) is what the API says, on the simulator's clock."""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import httpx

from together_facts.values import COMPUTE_CLASS_LABEL, GPUS_PER_NODE, PREEMPTIBLE
from together_sim.autoscale import Demand
from together_sim.kube.client import KubeApi, KubeApiError
from together_sim.kube.demand import demand_of
from together_sim.kube.pods import PodClock, gone
from together_sim.kube.processes import NODE_LABEL, ControlPlane
from together_sim.kube.views import ClusterView, NodeView, VolumeView
from together_sim.nodes import DRAIN_STARTED, SimNode
from together_sim.nodes.host.mounts import remove_tree
from together_sim.nodes.kwok import KwokNode, remove_node_object
from together_sim.nodes.pool import RealNodePool
from together_sim.nodes.real import RealNode, RealNodeSpec, node_labels
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
CRASHED: Final = "TogetherSimNodeProcessExited"

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


def is_real(node: Obj) -> bool:
    return (node["metadata"].get("labels") or {}).get(NODE_LABEL) == "false"


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
      after the volume (storage class ``""``), so a claim naming it binds; its ``hostPath`` is the
      volume's directory, which real nodes' pods mount.
    * **Real nodes** (``--real-nodes``): a new node takes a free slot of the pool and runs a
      kubelet (:class:`~together_sim.nodes.real.RealNode`), else it is a KWOK node
      (:class:`~together_sim.nodes.kwok.KwokNode`). Its pods are only evicted on a drain (the
      kubelet sends the SIGTERM), and it leaves the host once its ``may_go`` says its pods'
      grace periods, in real seconds, allow.
    """

    def __init__(
        self,
        plane: ControlPlane,
        view: ClusterView,
        pool: RealNodePool | None = None,
        volumes_dir: Path | None = None,
    ) -> None:
        self.plane = plane
        self.pool = pool
        self.volumes_dir = volumes_dir
        self._real: dict[str, RealNode] = {}
        self._drained_at: dict[str, float] = {}
        """Real, monotonic seconds at which this mirror first saw each real node draining."""
        self._crashes: list[tuple[str, str]] = []
        self._kwok_only: set[str] = set()
        """Nodes whose real node could not start: KWOK nodes from then on."""
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
        return serves_nodes(self._state, self._mirrored) and not self._registering

    @property
    def _registering(self) -> bool:
        return any(not n.ready(None) and not n.failure for n in list(self._real.values()))

    def release_real_nodes(self) -> None:
        """Remove every real node of the cluster from the host (the cluster or the simulator
        is going); safe from any thread, and more than once."""
        if self.pool is not None:
            for node in list(self._real.values()):
                self.pool.release(node)

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
            real_nodes={n: r.status() for n, r in list(self._real.items())},
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
        live = {n["metadata"]["name"]: n for n in api.nodes(SIM_NODES)}
        wanted = wanted_nodes(view)
        self._forget_stale_real(api, pods, live)
        self._remove_real(api, pods, live, wanted)  # first: a removal frees a slot for a refill
        leaving = any(n not in wanted for n in self._real)
        for node_id, node in wanted.items():
            if node_id in live or node_id in self._real:
                continue
            if self._start_real(view, node) is not None:
                continue
            if leaving and self.pool is not None and node_id not in self._kwok_only:
                continue  # a real node of ours is still draining: its slot is for this one
            kwok = KwokNode(api, node_object(view, node), pods)  # no free slot: a KWOK node
            live[node_id] = kwok.make()
        self._adopt_real(api, live)
        drains: dict[str, float] = {}
        for node in view.nodes:
            k8s = live.get(node.node_id)
            if node.draining_since is None or k8s is None:
                continue
            if DRAIN_STARTED not in (k8s["metadata"].get("annotations") or {}):
                reason = node.drain_reason or "TogetherScaledDown"
                self._node(api, pods, k8s).drain(
                    api, k8s, node.draining_since, reason, node.drain_message
                )
            drains[node.node_id] = node.draining_since
            if node.node_id in self._real:
                self._drained_at.setdefault(node.node_id, time.monotonic())
        all_pods = api.pods()
        pods.step(view.now, all_pods, drains, real=set(self._real))
        demand = demand_for(view, [live[n] for n in live if n in wanted], all_pods)
        if demand is not None:
            with self._lock:
                self._demand = demand
        for name in set(live) - set(wanted) - set(self._real):
            self._node(api, pods, live[name]).delete()
        self._mirror_volumes(api, view)

    def _remove_real(
        self, api: KubeApi, pods: PodClock, live: dict[str, Obj], wanted: dict[str, NodeView]
    ) -> None:
        """Real nodes the world removed go once the node allows (``may_go``: its pods' grace
        periods, in real seconds): the node is removed from the host first (its kubelet would
        register the Node again), then what is left of its pods and its Node."""
        leaving = [n for n in self._real if n not in wanted]
        if not leaving:
            return
        all_pods = api.pods()
        for name in leaving:
            node: SimNode = self._real[name]
            if not node.may_go(all_pods, self._drained_at.get(name), time.monotonic()):
                continue  # its pods' grace periods, in real seconds, are not over
            self._release_real(name)
            if live.pop(name, None) is not None:
                remove_node_object(api, pods, name)

    # ------------------------------------------------------------------ real nodes

    def _start_real(self, view: ClusterView, node: NodeView) -> RealNode | None:
        """A real node for ``node`` when a slot is free (None: the caller makes a KWOK node)."""
        if self.pool is None or node.node_id in self._kwok_only:
            return None
        compute_class = (COMPUTE_CLASS_LABEL, PREEMPTIBLE) if node.preemptible else None

        def labels(spec: RealNodeSpec) -> str:
            return node_labels(spec, compute_class)

        real = self.pool.acquire(
            name=node.node_id,
            preemptible=node.preemptible,
            gpu_type=view.gpu_type,
            cluster_dir=self.plane.root,
            apiserver_port=self.plane.ports.apiserver,
            pki=self.plane.pki,
            labels=labels,
            on_crash=self._on_crash,
        )
        if real is not None:
            self._real[node.node_id] = real
            log.info("cluster %s: node %s is a real node", view.cluster_id, node.node_id)
        return real

    def _on_crash(self, node: RealNode, process: str, code: int) -> None:
        """From the node's thread: noted here, reported on the mirror's next pass."""
        with self._lock:
            self._crashes.append((node.name, f"{process} exited with {code}"))

    def _adopt_real(self, api: KubeApi, live: dict[str, Obj]) -> None:
        """Real Nodes as the kubelet registered them: advertise 8 GPUs (a status patch, as
        Kubernetes documents for extended resources; the kubelet keeps it), report crashes, and
        replace a node that could not start by a KWOK node (on the next pass)."""
        with self._lock:
            crashes, self._crashes = self._crashes, []
        for name, real in list(self._real.items()):
            k8s = live.get(name)
            if real.ready(k8s) and k8s is not None:
                allocatable = k8s.get("status", {}).get("allocatable", {})
                if allocatable.get("nvidia.com/gpu") != str(GPUS_PER_NODE):
                    gpus = {"nvidia.com/gpu": str(GPUS_PER_NODE)}
                    live[name] = api.patch_node(
                        name, {"status": {"capacity": gpus, "allocatable": gpus}}, status=True
                    )
            elif real.failure and k8s is None:
                log.warning("real node %s could not start (%s); it is a KWOK node instead",
                            name, real.failure)  # fmt: skip
                self._kwok_only.add(name)
                self._release_real(name)
        for name, what in crashes:
            k8s = live.get(name)
            if k8s is not None and self._real.get(name) is not None:
                api.node_event(k8s, reason=CRASHED, message=(
                    f"{what}: the simulator leaves the node as Kubernetes shows it (NotReady) "
                    "until Together removes it (a reclaim, a scale-down or the cluster's delete)"
                ))  # fmt: skip

    def _forget_stale_real(self, api: KubeApi, pods: PodClock, live: dict[str, Obj]) -> None:
        """A real Node no real node of this run backs (its processes went with a stopped
        simulator): deleted, with its pods, so the pass makes the node again."""
        for name in [n for n, k8s in live.items() if is_real(k8s) and n not in self._real]:
            stale = [p for p in api.pods() if p["spec"].get("nodeName") == name and not gone(p)]
            log.warning("real node %s is gone (a stopped simulator's): deleting its Node and "
                        "%d pods, then making it again", name, len(stale))  # fmt: skip
            pods.remove_with_node(stale)
            api.delete_node(name)
            del live[name]

    def _release_real(self, name: str) -> None:
        real = self._real.get(name)
        if real is not None and self.pool is not None:
            self.pool.release(real)
        self._real.pop(name, None)
        self._drained_at.pop(name, None)

    def _node(self, api: KubeApi, pods: PodClock, k8s: Obj) -> SimNode:
        """The node behind a Node object: this run's real node, else a KWOK node."""
        real = self._real.get(k8s["metadata"]["name"])
        return real if real is not None else KwokNode(api, k8s, pods)

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
