"""The simulator's real-node slots (``--real-nodes N``): who holds one, the bridge they share,
the kernel settings to restore when the last one goes, and the leftovers of a killed simulator."""

from __future__ import annotations

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

__all__ = ["RECORD_FILE", "RealNodePool", "real_nodes_unavailable"]

RECORD_FILE: Final = "real-nodes.json"
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
        self._lock = threading.Lock()

    @property
    def _holder(self) -> str:
        return f"{os.getpid()}:{self.root}"

    @property
    def record_path(self) -> Path:
        return self.root / RECORD_FILE

    def start(self) -> RealNodePool:
        self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
        previous = self._remove_leftovers()
        hostfs.release_sysctls(self._holder)  # a killed simulator held them: maybe the last one
        self.network = claim_network(previous)
        self._save()
        return self

    def _remove_leftovers(self) -> int | None:
        """Remove what a killed simulator's nodes left; returns its bridge's index."""
        if not self.record_path.exists():
            return None
        data = json.loads(self.record_path.read_text())
        for raw in data.get("nodes", []):
            record = NodeRecord(**raw)
            log.warning("removing real node %s left by a stopped simulator", record.name)
            remove_recorded(record)
        index = data.get("network")
        if index is not None:
            Network(index).delete()
        self.record_path.unlink()
        return int(index) if index is not None else None

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
                hostfs.remove_empty_parents()
            else:
                self._save()
