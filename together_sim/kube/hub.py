"""Every cluster's control plane, driven from the simulated world (``--kubernetes``): one thread
hands each cluster's view to its mirror, and control planes start and stop with their clusters."""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Collection
from contextlib import AbstractContextManager
from dataclasses import asdict
from pathlib import Path
from typing import Any, Final

from together_sim import autoscale
from together_sim.host.image_seed import SEED_DIR
from together_sim.host.mounts import remove_tree
from together_sim.kube.mirror import ClusterMirror
from together_sim.kube.processes import BINARIES, ControlPlane, joined
from together_sim.model import World
from together_sim.nodes.pool import RealNodePool
from together_sim.nodes.provider import NodeProvider
from together_sim.plane.views import ClusterView, views_of
from together_sim.timings import CONTROL_PLANE_START_SECONDS

__all__ = ["KUBE_BIN_ENV", "KubeHub", "Transaction", "find_kube_bin"]

Transaction = Callable[[], AbstractContextManager[World]]
"""The runtime's :meth:`~together_sim.runtime.SimulatorRuntime.transaction`: the hub needs only
that, so it imports nothing of the runtime that owns it."""

KUBE_BIN_ENV: Final = "TOGETHER_KUBE_BIN"
VOLUMES_DIR: Final = "volumes"
"""``<root>/volumes/<volume id>``: each shared volume's files, mounted by real nodes' pods."""
_POLL_SECONDS: Final = 0.2
_NOT_CLUSTERS: Final = (VOLUMES_DIR, SEED_DIR)
"""What else lives in the root beside the clusters' directories: the volumes' files and the real
nodes' image seed (which the pool's journal removes)."""

log = logging.getLogger(__name__)


def find_kube_bin(explicit: Path | None = None) -> Path:
    """``--kube-bin``, else ``$TOGETHER_KUBE_BIN``: an installed simulator knows no checkout, so
    where the binaries are is always said (``make`` exports it from tools/kube/build.sh)."""
    candidate = explicit
    if candidate is None and os.environ.get(KUBE_BIN_ENV):
        candidate = Path(os.environ[KUBE_BIN_ENV])
    missing = [b for b in BINARIES if candidate is None or not (candidate / b).exists()]
    if candidate is None or missing:
        raise SystemExit(
            f"together_sim --kubernetes: no {', '.join(missing) or 'control plane'} in "
            f"{candidate or '(nowhere: neither --kube-bin nor $' + KUBE_BIN_ENV + ' is set)'}; "
            f"build them with `make engine` and point --kube-bin or ${KUBE_BIN_ENV} at the "
            f"directory holding {', '.join(BINARIES)}: in a checkout, "
            f'`export {KUBE_BIN_ENV}="$(tools/kube/build.sh)"`'
        )
    return candidate


class KubeHub:
    """Every cluster's control plane, driven from the simulated world.

    A thread takes a :class:`ClusterView` of every cluster about five times a second, and at once
    after a request (:meth:`poke`), advancing the world to the simulator's clock as a request
    would, and hands it to that cluster's :class:`ClusterMirror`. A control plane starts once its
    cluster's data plane is up, stops when the cluster is being deleted (or failed), and its files
    go when the cluster is gone. Each cluster's certificates and ports are chosen when the cluster
    is created, so its ``kube_config`` is the same from the first response on.

    A cluster directory holds about 120 MB (etcd's preallocated files, logs), so none outlives its
    cluster: a cluster that went while the simulator was stopped (or killed) has its directory
    removed at the next start, and one that goes during the last moments of a run at :meth:`close`.
    """

    def __init__(
        self,
        transaction: Transaction,
        bin_dir: Path,
        root: Path,
        pool: RealNodePool | None = None,
        poll_seconds: float = _POLL_SECONDS,
        start_timeout: float = CONTROL_PLANE_START_SECONDS,
    ) -> None:
        self.transaction = transaction
        """The runtime's transaction that does not :meth:`poke` this hub (its own passes)."""
        self.bin_dir = bin_dir
        self.root = root
        self.pool = pool
        """Real nodes (``--real-nodes``): their bridge is where every API server listens."""
        self._planes: dict[str, ControlPlane] = {}
        self._mirrors: dict[str, ClusterMirror] = {}
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._wake = threading.Event()
        """Set by :meth:`poke` (and :meth:`close`): the thread passes now, not at its tick."""
        self._poll_seconds = poll_seconds
        self.start_timeout = start_timeout
        """``--control-plane-timeout``: each step of a control plane's start may take this long."""
        self._thread = threading.Thread(target=self._run, name="kube-hub", daemon=True)

    @property
    def volumes_dir(self) -> Path:
        return self.root / VOLUMES_DIR

    def start(self) -> KubeHub:
        self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
        if self.pool is not None:
            self.pool.start()  # first: it removes a killed run's nodes, and claims the bridge
        names = self._remove_orphans()
        for cluster_id, name in names.items():  # resumed state: same kubeconfig as before
            self.prepare(cluster_id, name)
        self._thread.start()
        return self

    def _remove_orphans(self) -> dict[str, str]:
        """Delete the directory of every cluster the world no longer has; returns the name of
        each cluster it has, by id. Only at start and at close: no create runs then, so no
        directory is newer than the world."""
        with self.transaction() as world:
            names = {c.cluster_id: c.spec.cluster_name for c in world.clusters.values()}
        for entry in self.root.iterdir() if self.root.is_dir() else ():
            if entry.is_dir() and entry.name not in names and entry.name not in _NOT_CLUSTERS:
                log.info("removing the control-plane files of gone cluster %s", entry.name)
                remove_tree(entry)
        return names

    def _remove_deleted_volumes(self, existing: set[str]) -> None:
        """A deleted volume's directory goes with it (its data was the volume)."""
        if not self.volumes_dir.is_dir():
            return
        for entry in self.volumes_dir.iterdir():
            if entry.name not in existing:
                log.info("removing the files of deleted volume %s", entry.name)
                remove_tree(entry)

    def prepare(self, cluster_id: str, cluster_name: str) -> None:
        """Certificates and ports for a new cluster (no process yet)."""
        with self._lock:
            if cluster_id not in self._planes:
                self._planes[cluster_id] = ControlPlane(
                    self.root / cluster_id,
                    self.bin_dir,
                    cluster_id,
                    cluster_name,
                    host=self.pool.gateway if self.pool is not None else "127.0.0.1",
                    start_timeout=self.start_timeout,
                )

    def kube_config(self, cluster_id: str) -> str | None:
        with self._lock:
            plane = self._planes.get(cluster_id)
        return plane.kubeconfig() if plane is not None else None

    def serving(self, cluster_id: str) -> bool:
        """Whether the cluster's control plane answers and has mirrored its nodes once: until
        then the API does not call the cluster Ready (see `render_cluster`)."""
        with self._lock:
            mirror = self._mirrors.get(cluster_id)
        return mirror is not None and mirror.serving

    def marked_nodes(self, cluster_id: str) -> frozenset[str]:
        """The cluster's Nodes marked for targeted scale-down (none without a control plane)."""
        with self._lock:
            mirror = self._mirrors.get(cluster_id)
        return mirror.marked_nodes() if mirror is not None else frozenset()

    def status(self) -> dict[str, Any]:
        with self._lock:
            mirrors = dict(self._mirrors)
        return {cid: asdict(m.status()) for cid, m in mirrors.items()}

    def poke(self) -> None:
        """The world may have changed (a request's transaction): pass now rather than at the
        next tick, so a reclaim reaches its mirror at once. Safe at any moment: a poke before
        :meth:`start` makes the first pass early, one during or after :meth:`close` is ignored
        (the thread ends on ``_stopping`` alone), and many pokes during a pass make one pass."""
        self._wake.set()

    def close(self, timeout: float = 10.0) -> None:
        """Stop every control plane and wait for their processes to end, then remove the files
        of clusters that are gone.

        Under load a mirror's pass (several API-server calls) or the hub's can take seconds, so
        the processes are signalled from here at once, every cluster's at the same moment,
        rather than by each mirror thread once its pass is over: the mirror threads then fail
        fast against stopped API servers. The wait is one deadline for all of them."""
        self._stopping.set()
        self._wake.set()  # a thread waiting for its tick sees the stop now
        deadline = time.monotonic() + timeout
        mirrors = self._signal_all()
        for mirror in mirrors:
            mirror.plane.stop(max(0.1, deadline - time.monotonic()))
        self._thread.join(max(1.0, deadline - time.monotonic()))
        late = self._signal_all(besides=mirrors)  # made by the last pass
        for mirror in mirrors + late:
            mirror.plane.stop(max(0.1, deadline - time.monotonic()))
            mirror.join(max(1.0, deadline - time.monotonic()))
        if self.pool is not None:  # whatever a mirror thread still held: removed from here
            self.pool.close()
        self._remove_orphans()
        with self.transaction() as world:
            volumes = _kept_volumes(world)
        self._remove_deleted_volumes(volumes)
        # No volume left: nothing of them either. Only here, where no mirror can make one.
        if self.volumes_dir.is_dir() and not any(self.volumes_dir.iterdir()):
            self.volumes_dir.rmdir()

    def _signal_all(self, besides: Collection[ClusterMirror] = ()) -> list[ClusterMirror]:
        """Signal every mirror not in ``besides`` (each once: those were signalled already)."""
        with self._lock:
            mirrors = [m for m in self._mirrors.values() if m not in besides]
        for mirror in mirrors:
            mirror.stop()
            mirror.plane.terminate()
        return mirrors

    # ------------------------------------------------------------------- thread

    def _run(self) -> None:
        """Pass at every poke, else every ``poll_seconds``, until :meth:`close`; nothing else
        ends the thread. A hub thread gone unnoticed leaves every new cluster without a control
        plane, never Ready, and its client waiting forever, so whatever a pass raises is logged
        and the next pass runs: even SystemExit, which a thread would otherwise end on silently
        (``threading.excepthook`` ignores it)."""
        while not self._stopping.is_set():
            try:
                self._wake.wait(self._poll_seconds)
                self._wake.clear()  # before the pass: a poke during it is one more pass
                if not self._stopping.is_set():
                    self._pass()
            except BaseException:  # keep mirroring the other clusters
                log.exception("kubernetes pass failed")

    def _pass(self) -> None:
        with self._lock:
            running = dict(self._mirrors)
        demands = {cid: d for cid, m in running.items() if (d := m.take_demand()) is not None}
        with self.transaction() as world:
            autoscale.step_each(world, demands)  # Together's autoscaler, where asked for
            views = views_of(world)
            volumes = _kept_volumes(world)
        self._remove_deleted_volumes(volumes)
        for cluster_id, view in views.items():
            if self._stopping.is_set():  # close() is stopping every control plane
                return
            try:
                self._offer(cluster_id, view)
            except Exception:  # the other clusters are still mirrored
                log.exception("cluster %s: kubernetes pass failed", cluster_id)
        with self._lock:  # a create adds planes meanwhile
            forgotten = set(self._planes) - set(views)
        for cluster_id in forgotten:  # stop, then delete its files
            with self._lock:
                plane = self._planes.pop(cluster_id)
                mirror = self._mirrors.pop(cluster_id, None)
            if mirror is not None:
                mirror.stop(remove=True)
            else:
                remove_tree(plane.root)

    def _offer(self, cluster_id: str, view: ClusterView) -> None:
        """Hand the view to the cluster's mirror, made and started once its data plane is up.
        A mirror is registered only once its thread runs: one whose thread could not start is
        made again on the next pass, rather than kept, never passing, its cluster never Ready."""
        mirror = self._mirrors.get(cluster_id)
        if mirror is None and view.data_plane_up and not view.gone:
            self.prepare(cluster_id, view.cluster_name)
            plane = self._planes[cluster_id]
            nodes = NodeProvider(cluster_id, joined(plane), self.pool)
            mirror = ClusterMirror(plane, view, nodes, self.volumes_dir)
            mirror.start()
            with self._lock:
                self._mirrors[cluster_id] = mirror
        elif mirror is not None and view.gone:
            mirror.stop()
        if mirror is not None:
            mirror.offer(view)


def _kept_volumes(world: World) -> set[str]:
    """The volumes whose files stay: every one not being deleted."""
    return {v.volume_id for v in world.volumes.by_id.values() if v.deleting_since is None}
