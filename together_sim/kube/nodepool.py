"""The simulator's real-node slots (``--real-nodes N``): who holds one, the bridge they share,
the kernel settings to restore when the last one goes, and the leftovers of a killed simulator
(its own, and any other's on the machine)."""

from __future__ import annotations

import fcntl
import json
import logging
import os
import shutil
import threading
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any, Final

from together_sim.kube import hostfs
from together_sim.kube.hostnet import MAX_SLOTS, Network, claim_network
from together_sim.kube.images import NodeImages
from together_sim.kube.realnode import NodeRecord, RealNode, RealNodeSpec, remove_recorded

__all__ = ["POOLS", "RECORD_FILE", "RealNodePool", "real_nodes_unavailable", "sweep_dead_pools"]

RECORD_FILE: Final = "real-nodes.json"
POOLS: Final = hostfs.POOLS
"""One entry per running pool on the machine: its simulator's process and where its record is.
A simulator killed with SIGKILL never removes its nodes; the next one on the machine to start
real nodes does (:func:`sweep_dead_pools`), whatever its ``--state-dir``, or none."""
_POOLS_LOCK: Final = hostfs.RUN_DIR / ".pools.lock"
TEMPORARY_PREFIX: Final = "together-sim-kube-"
"""The name of a simulator's temporary root starts so (``tempfile.mkdtemp`` in the runtime)."""
REQUIRED_COMMANDS: Final = ("containerd", "ctr", "runc", "nsenter", "ip", "iptables")
REQUIRED_CNI: Final = ("bridge", "host-local", "loopback")

log = logging.getLogger("together_sim.kube")


def real_nodes_unavailable(kube_bin: Path | None = None) -> str:
    """Why real nodes cannot run on this machine ("" when they can): they need root (network
    namespaces, cgroups, mounts), Debian's containerd, runc and CNI plugins, and the kubelet."""
    if os.geteuid() != 0:
        return "real nodes need root (network namespaces, cgroups and mounts); run as root"
    missing = [c for c in REQUIRED_COMMANDS if shutil.which(c) is None]
    missing += [f"/usr/lib/cni/{p}" for p in REQUIRED_CNI if not Path("/usr/lib/cni", p).exists()]
    if missing:
        return (
            f"real nodes need {', '.join(missing)}: apt-get install containerd runc "
            "containernetworking-plugins iptables (tools/images/ has the script)"
        )
    if not hostfs.CGROUP_ROOT.is_dir():
        return "real nodes need the cgroup filesystem at /sys/fs/cgroup"
    if kube_bin is not None and not (kube_bin / "kubelet").exists():
        return f"no kubelet in {kube_bin}: rebuild with tools/kube/build.sh (it builds the kubelet)"
    return ""


class RealNodePool:
    """Up to ``slots`` real nodes at a time, over every cluster (a slot is a machine's share).

    Everything a node puts on the host is recorded in ``<root>/real-nodes.json`` before it
    starts, with the kernel settings the kubelet rewrites as they were before the first node: a
    simulator killed with SIGKILL leaves shims and containers running (containerd detaches them),
    and its next start removes them (:meth:`start`)."""

    def __init__(self, root: Path, slots: int, kube_bin: Path, images: NodeImages) -> None:
        if not 0 < slots <= MAX_SLOTS:
            raise SystemExit(f"together_sim: --real-nodes {slots}: give 0 to {MAX_SLOTS}")
        self.root = root
        self.slots = slots
        self.kube_bin = kube_bin
        self.images = images
        self.network: Network | None = None
        self._nodes: dict[int, RealNode] = {}
        self._holding = False
        """Whether this pool holds the machine's kernel settings (hostfs.hold_sysctls)."""
        self.temporary = False
        """Whether ``root`` is the simulator's temporary directory (no ``--state-dir``): nothing
        but a sweep finds it after a SIGKILL, and the sweep removes it whole."""
        self._entry: Path | None = None
        self._lock = threading.Lock()

    @property
    def _holder(self) -> str:
        return f"{os.getpid()}:{self.root}"

    @property
    def record_path(self) -> Path:
        return self.root / RECORD_FILE

    def start(self) -> RealNodePool:
        self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
        # Its own first, so the bridge keeps its index; then any other killed simulator's.
        previous = _remove_record(self.record_path)
        sweep_dead_pools()
        hostfs.release_sysctls(self._holder)  # a killed simulator held them: maybe the last one
        self.network = claim_network(previous)
        self._save()
        self._register()
        return self

    def _register(self) -> None:
        """This pool's entry in :data:`POOLS`, removed by :meth:`close` once no node is left."""
        POOLS.mkdir(parents=True, exist_ok=True)
        pid = os.getpid()
        self._entry = POOLS / f"{pid}-{id(self):x}.json"
        entry = {
            "pid": pid,
            "started": hostfs.process_started(pid),
            "record": str(self.record_path),
            "temporary": self.temporary,
        }
        hostfs.save_json(self._entry, entry)

    def _save(self) -> None:
        data: dict[str, Any] = {
            "network": self.network.index if self.network is not None else None,
            "nodes": [asdict(n.record) for n in self._nodes.values()],
        }
        hostfs.save_json(self.record_path, data)

    @property
    def gateway(self) -> str:
        assert self.network is not None, "the pool is not started"
        return self.network.gateway

    def acquire(
        self,
        *,
        name: str,
        preemptible: bool,
        gpu_type: str,
        cluster_dir: Path,
        apiserver_port: int,
        pki: Any,
        labels: Callable[[RealNodeSpec], str],
        on_crash: Callable[[RealNode, str, int], None],
    ) -> RealNode | None:
        """A started real node for ``name`` in a free slot, or None when every slot is held
        (the caller then makes a KWOK node)."""
        assert self.network is not None, "the pool is not started"
        with self._lock:
            free = [s for s in range(self.slots) if s not in self._nodes]
            if not free:
                return None
            spec = RealNodeSpec(
                name=name,
                slot=free[0],
                slots=self.slots,
                preemptible=preemptible,
                gpu_type=gpu_type,
                cluster_dir=cluster_dir,
                kube_bin=self.kube_bin,
                images=self.images,
                network=self.network,
                apiserver_port=apiserver_port,
                pki=pki,
            )
            node = RealNode(spec, labels(spec), on_crash)
            if not self._holding:
                hostfs.hold_sysctls(self._holder)
                self._holding = True
            self._nodes[spec.slot] = node
            self._save()
        return node.start()

    def release(self, node: RealNode) -> list[str]:
        """Remove ``node`` from the host and free its slot; the last one out restores the
        kernel settings its kubelets rewrote. Returns what could not be removed."""
        left = node.delete()
        with self._lock:
            if self._nodes.get(node.spec.slot) is node:
                del self._nodes[node.spec.slot]
            if not self._nodes and self._holding:
                hostfs.release_sysctls(self._holder)
                self._holding = False
            self._save()
        return left

    def nodes(self) -> list[RealNode]:
        with self._lock:
            return list(self._nodes.values())

    def close(self) -> None:
        """Remove every real node (in parallel: each waits for its processes), the bridge, and
        the record: the host is as before the simulator started."""
        threads = [
            threading.Thread(target=self.release, args=(n,), daemon=True) for n in self.nodes()
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30.0)
        with self._lock:
            if self._holding:
                hostfs.release_sysctls(self._holder)
                self._holding = False
            if self.network is not None:
                self.network.delete()
                self.network = None
            if not self._nodes:
                self.record_path.unlink(missing_ok=True)
                if self._entry is not None:
                    self._entry.unlink(missing_ok=True)
                hostfs.remove_empty_parents()
            else:  # kept, with its entry: the next sweep after this process ends retries
                self._save()


def _remove_record(path: Path) -> int | None:
    """Remove what the nodes recorded in ``path`` left, their bridge and the record; returns
    the bridge's index (None: no record)."""
    if not path.exists():
        return None
    data = json.loads(path.read_text())
    for raw in data.get("nodes", []):
        record = NodeRecord(**raw)
        log.warning("removing real node %s left by a stopped simulator", record.name)
        remove_recorded(record)
    index = data.get("network")
    if index is not None:
        Network(index).delete()
    path.unlink()
    return int(index) if index is not None else None


def sweep_dead_pools() -> list[Path]:
    """Remove what every pool of :data:`POOLS` whose simulator is gone left on the host (a
    SIGKILL skips :meth:`RealNodePool.close`): its nodes, its bridge, and a temporary root whole.
    A pool whose process still runs (the same pid and start time) is left alone. Returns the
    records swept."""
    POOLS.mkdir(parents=True, exist_ok=True)
    swept: list[Path] = []
    with _POOLS_LOCK.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two simulators starting at once sweep one at a time
        for entry in sorted(POOLS.glob("*.json")):
            try:
                data = json.loads(entry.read_text())
                pid, started, record = int(data["pid"]), data["started"], Path(data["record"])
            except (OSError, ValueError, KeyError, TypeError):
                entry.unlink(missing_ok=True)  # a torn write: save_json replaces atomically
                continue
            if hostfs.process_started(pid) == started:
                continue
            _remove_record(record)
            if data.get("temporary") and record.parent.name.startswith(TEMPORARY_PREFIX):
                hostfs.remove_tree(record.parent)
            entry.unlink(missing_ok=True)
            swept.append(record)
    if swept:
        hostfs.remove_empty_parents()
    return swept
