"""The simulator's real-node slots (``--real-nodes N``): who holds one, the bridge they share,
the kernel settings to restore when the last one goes, and the pool's journal of host changes,
which names each node's (:mod:`together_sim.host.journal`)."""

from __future__ import annotations

import bisect
import json
import logging
import os
import shutil
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Final

from together_sim.host import cgroups, held, journal, processes, shared, sysctls, systemd
from together_sim.host.image_seed import ImageSeed
from together_sim.host.images import NodeImages
from together_sim.host.journal import Journal, Owner
from together_sim.host.network import MAX_SLOTS, Network, claim_network
from together_sim.nodes.real import JoinedPlane, PoolShare, RealNode, RealNodeSpec

__all__ = ["RECORD_FILE", "RealNodePool", "place_cgroups", "real_nodes_unavailable"]

RECORD_FILE: Final = "real-nodes.json"
"""``<root>/real-nodes.json``: the bridge's index and the pool's journal, so a restarted
simulator asks for the same bridge (its kubeconfigs name the address) and a test finds both.
What the host holds is in the journal, never here."""
TEMPORARY_PREFIX: Final = "together-sim-kube-"
"""The name of a simulator's temporary root starts so (``tempfile.mkdtemp`` in the runtime)."""
REQUIRED_COMMANDS: Final = ("containerd", "ctr", "runc", "nsenter", "ip", "iptables")
REQUIRED_CNI: Final = ("bridge", "host-local", "loopback")

log = logging.getLogger(__name__)


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
    if not cgroups.CGROUP_ROOT.is_dir():
        return "real nodes need the cgroup filesystem at /sys/fs/cgroup"
    if systemd.manages_cgroups():
        if shutil.which("systemd-run") is None:
            return "real nodes on a systemd host need systemd-run (Debian's systemd package)"
    elif why := cgroups.v2_unavailable():
        return why
    if kube_bin is not None and not (kube_bin / "kubelet").exists():
        return f"no kubelet in {kube_bin}: rebuild with tools/kube/build.sh (it builds the kubelet)"
    return ""


def place_cgroups(journal: Journal, index: int) -> tuple[str, subprocess.Popen[bytes] | None]:
    """Where the cgroups of the pool with bridge ``tsim<index>`` go, and the process that holds
    that place. On a cgroup v2 host with systemd: a delegated scope of its own
    (:mod:`together_sim.host.systemd` says why), in the journal before it is made, then its
    holder, with any controller the kubelet needs that systemd does not delegate enabled above
    it; what is enabled above the scope is held first (journaled: the last simulator out puts
    it back, :data:`~together_sim.host.systemd.above_scope()`); elsewhere ``together-sim``
    below the root of each hierarchy, held by nothing."""
    if not systemd.manages_cgroups():
        return cgroups.PARENT, None
    unit = systemd.scope_unit(index)
    holds = held.holder(os.getpid(), unit)
    journal.record("above_scope", holder=holds)
    systemd.above_scope().hold(holds)  # before this pool's runc and hugetlb change it
    if extra := systemd.undelegated():  # hugetlb: systemd delegates only what it manages
        systemd.enable_above_scope(extra)
    journal.record("scope", unit=unit)
    holder, parent = systemd.start_scope(unit)
    started = processes.process_started(holder.pid)
    if started is not None:
        journal.record("process", pid=holder.pid, started=started, name="scope-holder")
    return parent, holder


class RealNodePool:
    """Up to ``slots`` real nodes at a time, over every cluster (a slot is a machine's share).

    The pool's journal (``/run/together-sim/journals/pool-<pid>-<start>-<n>.jsonl``) names, in
    order, a temporary root, the bridge, the kernel settings it holds and each node's own
    journal, each before it is made. :meth:`close` undoes it; a simulator killed with SIGKILL
    leaves it behind, and the next start of any simulator with real nodes, or
    ``python -m together_sim cleanup``, undoes it (:func:`journal.sweep`)."""

    def __init__(
        self, root: Path, slots: int, kube_bin: Path, images: NodeImages, *, reuses: bool = True
    ) -> None:
        if not 0 < slots <= MAX_SLOTS:
            raise SystemExit(f"together_sim: --real-nodes {slots}: give 0 to {MAX_SLOTS}")
        self.root = root
        self.slots = slots
        self.reuses = reuses
        """Whether a slot a node freed is given again (``--real-nodes-once``: not, so only the
        first ``slots`` nodes made are real)."""
        self._free = list(range(slots))
        """The slots a new node may take, lowest first; :meth:`release` gives one back only
        when the pool :attr:`reuses` its slots."""
        self.kube_bin = kube_bin
        self.images = images
        self.network: Network | None = None
        self.journal: Journal | None = None
        self.cgroup_parent = cgroups.PARENT
        """Where the nodes' and the seed's cgroups go (:func:`place_cgroups`)."""
        self._scope_holder: subprocess.Popen[bytes] | None = None
        """The process that keeps a systemd scope alive (reaped at :meth:`close`)."""
        self.seed: ImageSeed | None = None
        """The images, unpacked once for every node (:mod:`~together_sim.host.image_seed`)."""
        self._nodes: dict[int, RealNode] = {}
        self._holding = False
        """Whether this pool holds the machine's kernel settings (sysctls.hold_sysctls)."""
        self.temporary = False
        """Whether ``root`` is the simulator's temporary directory (no ``--state-dir``): it is
        in the journal, so it goes with the pool, or with the sweep after a SIGKILL."""
        self._lock = threading.Lock()
        self._closing = False
        """Set by :meth:`close`: no node is made from then on (a mirror's last pass may ask)."""

    @property
    def _holder(self) -> str:
        return sysctls.holder(os.getpid(), self.root)

    @property
    def record_path(self) -> Path:
        return self.root / RECORD_FILE

    def start(self) -> RealNodePool:
        self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
        with shared.host_lock():  # a sweep and a claim at a time on the machine
            journal.sweep()  # any killed simulator's, this state dir's last run among them
            owner = Owner.me()
            path = shared.JOURNALS / f"pool-{owner.pid}-{owner.started}-{id(self):x}.jsonl"
            self.journal = Journal.create(path, owner)
            if self.temporary:
                self.journal.record("directory", path=str(self.root))
            self.network = claim_network(self.journal, self._previous_index())
        self.cgroup_parent, self._scope_holder = place_cgroups(self.journal, self.network.index)
        # Now, not at the first node: the import then runs while the first control plane boots.
        self.seed = ImageSeed(
            self.root, self.images, self.journal, f"seed{self.network.index}", self.cgroup_parent
        ).start()
        shared.save_json(
            self.record_path, {"network": self.network.index, "journal": str(self.journal.path)}
        )
        return self

    def _previous_index(self) -> int | None:
        try:
            return int(json.loads(self.record_path.read_text())["network"])
        except (OSError, ValueError, KeyError, TypeError):
            return None

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
        plane: JoinedPlane,
        labels: Callable[[RealNodeSpec], str],
        on_crash: Callable[[RealNode, str, int], None],
    ) -> RealNode | None:
        """A started real node for ``name`` in the lowest free slot, or None when no slot is
        free (the provider then makes a KWOK node), or once the pool is closing."""
        with self._lock:
            if not self._free or self._closing:
                return None
            assert self.network is not None and self.journal is not None, "pool not started"
            assert self.seed is not None, "the pool is not started"
            share = PoolShare(
                self.slots, self.kube_bin, self.images, self.seed, self.network, self.cgroup_parent
            )
            spec = RealNodeSpec(
                name=name, slot=self._free.pop(0), preemptible=preemptible, gpu_type=gpu_type,
                plane=plane, pool=share,
            )  # fmt: skip
            if not self._holding:
                before = sysctls.read_sysctls()
                self.journal.record("sysctls", holder=self._holder, before=before)
                sysctls.hold_sysctls(self._holder)
                self._holding = True
            node_journal = self.journal.new_child(f"node-{spec.slot}")
            node = RealNode(spec, labels(spec), on_crash, node_journal)
            self._nodes[spec.slot] = node
        return node.make()

    def release(self, node: RealNode) -> list[str]:
        """Remove ``node`` from the host and free its slot (to be given again if the pool
        :attr:`reuses` slots); the last one out restores the kernel settings its kubelets
        rewrote. Returns what could not be removed: the slot of such a node stays taken (its
        namespace may be there) until the pool closes."""
        left = node.delete()
        with self._lock:
            if not left and self._nodes.get(node.spec.slot) is node:
                del self._nodes[node.spec.slot]
                if self.reuses:
                    bisect.insort(self._free, node.spec.slot)
            if not self._nodes and self._holding:
                sysctls.release_sysctls(self._holder)
                self._holding = False
        return left

    def nodes(self) -> list[RealNode]:
        with self._lock:
            return list(self._nodes.values())

    def close(self) -> list[str]:
        """Remove every real node (in parallel: each waits for its processes), then undo the
        pool's journal (whatever a node left, the bridge, the kernel settings, a temporary
        root). Returns what is left on the host: its entries stay in the journal, which the next
        sweep undoes once this process has ended."""
        with self._lock:
            self._closing = True  # from here no node is made: every one is in nodes()
        threads = [
            threading.Thread(target=self.release, args=(n,), daemon=True) for n in self.nodes()
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30.0)
        if self.seed is not None:  # an import still running ends before its journal is undone
            self.seed.cancel()
        with self._lock:
            left: list[str] = []
            if self.journal is not None:
                left = self.journal.undo().left
            self._holding = False
            self.network = None
        if self._scope_holder is not None:  # killed by the undo: reaped, no zombie stays
            self._scope_holder.poll()
        shared.remove_empty_parents()
        if left:
            log.error(
                "real nodes left on the host: %s; `python -m together_sim cleanup` removes "
                "them once this simulator has ended",
                ", ".join(left),
            )
        return left
