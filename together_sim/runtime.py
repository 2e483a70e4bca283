"""One running simulator: virtual clock, world, store, faults and request log."""

from __future__ import annotations

import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from together_sim.clock import VirtualClock
from together_sim.faults import FaultInjector, RequestLog
from together_sim.model import World
from together_sim.store import Store
from together_sim.timings import CONTROL_PLANE_START_SECONDS, Timings

if TYPE_CHECKING:
    from together_sim.kube.hub import KubeHub
    from together_sim.nodes.pool import RealNodePool

__all__ = ["SimulatorConfig", "SimulatorRuntime"]


@dataclass(frozen=True)
class SimulatorConfig:
    """Everything the CLI flags control; the defaults suit a demo."""

    state_dir: Path | None = None
    api_keys: tuple[str, ...] = ("sim-key",)
    time_scale: float = 1.0
    admin: bool = False
    reclaim_rate: float = 0.0
    seed: int | None = None
    timings: Timings = field(default_factory=Timings)
    kubernetes: bool = False
    """Run a real control plane per cluster (:mod:`together_sim.kube`)."""
    kube_bin: Path | None = None
    """Where etcd, kube-apiserver, ... are; None: ``$TOGETHER_KUBE_BIN`` (one of them is needed)."""
    real_nodes: int = 0
    """Up to this many nodes at a time run a real kubelet and containerd (the rest are KWOK)."""
    real_nodes_once: bool = False
    """A slot a real node freed is not given again: only the first ``real_nodes`` nodes made are
    real (``--real-nodes-once``)."""
    images_dir: Path | None = None
    """The real nodes' image archives; None: ``$TOGETHER_IMAGES_DIR``."""
    image_archives: tuple[Path, ...] = ()
    """A user's own image archives, imported into every real node too."""
    control_plane_timeout: float = CONTROL_PLANE_START_SECONDS
    """How long each step of a cluster's control-plane start may take (a slow host: more)."""


class SimulatorRuntime:
    """Owns the state; every request goes through :meth:`transaction`."""

    def __init__(self, config: SimulatorConfig) -> None:
        self.config = config
        self.world = World(
            timings=config.timings, reclaim_rate=config.reclaim_rate, seed=config.seed or 0
        )
        self.store = Store(config.state_dir)
        resumed = self.store.load(self.world)
        # Virtual time resumes where the previous run stopped (downtime does not count).
        start = self.world.now if resumed else time.time()
        self.world.now = start
        self.clock = VirtualClock(start, config.time_scale)
        self.faults = FaultInjector(config.seed)
        self.requests = RequestLog()
        self._lock = threading.Lock()
        self.stopping = threading.Event()
        """Set once the simulator has been told to stop: the API answers 503 from then on."""
        self.kube: KubeHub | None = None
        self._kube_tmp: str | None = None

    def start_kubernetes(self) -> None:
        """Start the control-plane hub (``--kubernetes``): under ``<state dir>/kube``, or a
        temporary directory removed by :meth:`close` when the state is in memory."""
        from together_sim.kube.hub import KubeHub, find_kube_bin
        from together_sim.nodes.pool import TEMPORARY_PREFIX

        bin_dir = find_kube_bin(self.config.kube_bin)
        pool = self._real_node_pool(bin_dir)
        if self.config.state_dir is not None:
            root = self.config.state_dir / "kube"
        else:
            self._kube_tmp = tempfile.mkdtemp(prefix=TEMPORARY_PREFIX)
            root = Path(self._kube_tmp)
        if pool is not None:
            pool.root = root
            pool.temporary = self._kube_tmp is not None
        # The hub's own transactions do not wake it: it would pass again at once, forever.
        self.kube = KubeHub(
            partial(self.transaction, wake=False), bin_dir, root, pool,
            start_timeout=self.config.control_plane_timeout,
        ).start()  # fmt: skip

    def _real_node_pool(self, bin_dir: Path) -> RealNodePool | None:
        """``--real-nodes``: checked before anything starts, so a machine that cannot run them
        gets one message with the fix."""
        from together_sim.host.images import NodeImages, find_images
        from together_sim.nodes.pool import RealNodePool, real_nodes_unavailable

        count = self.config.real_nodes
        if count <= 0:
            return None
        reason = real_nodes_unavailable(bin_dir)
        if reason:
            raise SystemExit(f"together_sim --real-nodes {count}: {reason}")
        images = NodeImages.load(find_images(self.config.images_dir), self.config.image_archives)
        return RealNodePool(Path(), count, bin_dir, images, reuses=not self.config.real_nodes_once)

    def kube_config(self, cluster_id: str) -> str | None:
        """The working kubeconfig of the cluster's control plane, or None without one."""
        return self.kube.kube_config(cluster_id) if self.kube is not None else None

    def close(self) -> None:
        """Stop every control plane, then close the store. A temporary root with real nodes is
        in their pool's journal, which removes it last (or keeps it, with whatever a node left
        in it, for the sweep); without real nodes it is removed here."""
        from together_sim.host.mounts import remove_tree

        self.stopping.set()
        journaled = False
        if self.kube is not None:
            journaled = self.kube.pool is not None and self.kube.pool.journal is not None
            self.kube.close()
            self.kube = None
        if self._kube_tmp is not None and not journaled:
            remove_tree(Path(self._kube_tmp))
        self._kube_tmp = None
        self.store.close()

    @contextmanager
    def transaction(self, *, wake: bool = True) -> Iterator[World]:
        """Serialise access, bring the world up to virtual now, persist afterwards.

        ``wake``: a request may have changed the world (a reclaim, a create, or only the clock
        moving on), so the kube hub passes now rather than at its next tick; a failed request
        too (the world advanced before it failed). Only the hub's own transactions pass False."""
        try:
            with self._lock:
                self.world.advance(self.clock.now())
                try:
                    yield self.world
                finally:
                    self.store.save(self.world)
        finally:
            if wake:
                self._wake_kube()

    def advance(self, seconds: float) -> float:
        try:
            with self._lock:
                now = self.clock.advance(seconds)
                self.world.advance(now)
                self.store.save(self.world)
                return now
        finally:
            self._wake_kube()

    def _wake_kube(self) -> None:
        """After the lock is released, so the hub's pass need not wait for it; ``self.kube`` is
        read once, as :meth:`close` may set it to None meanwhile."""
        kube = self.kube
        if kube is not None:
            kube.poke()
