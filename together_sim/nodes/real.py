"""One real node: its own containerd and kubelet in its own network namespace and cgroup, so a
pod's process gets a real SIGTERM; every change it makes to the host is in its journal first,
and :meth:`RealNode.delete` undoes the journal."""

from __future__ import annotations

import contextlib
import json
import logging
import shutil
import subprocess
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from together_sim.host import cgroups, shared
from together_sim.host.image_seed import ImageSeed
from together_sim.host.images import NodeImages
from together_sim.host.journal import Journal
from together_sim.host.network import Network
from together_sim.host.processes import wait_ready
from together_sim.plane.pki import (
    ClusterPki,
    node_credential_paths,
    node_credentials,
    write_private,
)
from together_sim.plane.pods import grace_seconds, terminal

__all__ = [
    "KILL_MARGIN_SECONDS",
    "RUN_ROOT",
    "JoinedPlane",
    "NodeLayout",
    "PoolShare",
    "RealNode",
    "RealNodeSpec",
    "removable",
]

Obj = dict[str, Any]

RUN_ROOT: Final = shared.RUN_DIR
"""Sockets, containerd's state and the kubelet's directory: short paths, since a unix socket's
path has at most 107 bytes (the cluster's directory under a state dir can be longer)."""
CNI_BIN: Final = Path("/usr/lib/cni")
RUNC: Final = shutil.which("runc", path="/usr/sbin:/usr/bin") or "/usr/sbin/runc"
"""Debian's runc is /usr/sbin/runc; Docker's containerd.io ships /usr/bin/runc (node-deps.sh)."""
_MONITOR_SECONDS: Final = 0.5
_START_STEP_SECONDS: Final = 30.0
"""The longest a step of a node's start runs once the node is being removed: each step checks
the stop, or is a host command of a few tenths of a second."""
KILL_MARGIN_SECONDS: Final = 5.0
"""Real seconds a real node outlives its pods' last grace period, so its kubelet reports the
SIGKILL's exit code (137) before the node goes."""

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class JoinedPlane:
    """The control plane a real node joins: its cluster's directory (the node's files go below
    it), its API server's port, and the certificates the node's own are signed with."""

    cluster_dir: Path
    apiserver_port: int
    pki: ClusterPki


@dataclass(frozen=True)
class PoolShare:
    """What every real node of a pool shares: the slot count, the kubelet's directory, the
    images and their seed, and the bridge network."""

    slots: int
    kube_bin: Path
    images: NodeImages
    seed: ImageSeed
    network: Network
    cgroup_parent: str = cgroups.PARENT
    """Where the nodes' cgroups go: ``together-sim`` at the root of each hierarchy, or the
    pool's delegated systemd scope on a cgroup v2 host with systemd."""


@dataclass(frozen=True)
class RealNodeSpec:
    """What one real node is: the simulator's node name and slot, its kind of node, the control
    plane it joins and what it shares with the pool's other nodes."""

    name: str
    slot: int
    preemptible: bool
    gpu_type: str
    plane: JoinedPlane
    pool: PoolShare


@dataclass(frozen=True)
class NodeLayout:
    """Where one node's things are on the host: its sockets and state, its files, its cgroup."""

    name: str
    slot: int
    network_index: int
    run_dir: str
    node_dir: str
    cgroup: str

    @classmethod
    def of(cls, spec: RealNodeSpec) -> NodeLayout:
        netns = spec.pool.network.netns(spec.slot)
        return cls(
            name=spec.name,
            slot=spec.slot,
            network_index=spec.pool.network.index,
            run_dir=str(RUN_ROOT / netns),
            node_dir=str(spec.plane.cluster_dir / "nodes" / spec.name),
            cgroup=f"{spec.pool.cgroup_parent}/{netns}",
        )


def _containerd_toml(spec: RealNodeSpec, layout: NodeLayout) -> str:
    run_dir, node_dir = Path(layout.run_dir), Path(layout.node_dir)
    cri = 'plugins."io.containerd.grpc.v1.cri"'
    return f"""version = 2
root = "{node_dir / "containerd"}"
state = "{run_dir / "containerd"}"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.devmapper"]
[grpc]
  address = "{run_dir / "containerd.sock"}"
[ttrpc]
  address = "{run_dir / "containerd.sock.ttrpc"}"
[plugins."io.containerd.internal.v1.opt"]
  path = "{node_dir / "opt"}"
[{cri}]
  sandbox_image = "{spec.pool.images.sandbox}"
  enable_cdi = false
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  [{cri}.containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [{cri}.containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [{cri}.containerd.runtimes.runc.options]
        SystemdCgroup = false
        BinaryName = "{RUNC}"
  [{cri}.cni]
    bin_dir = "{CNI_BIN}"
    conf_dir = "{run_dir / "cni"}"
"""


def _cni_conflist(spec: RealNodeSpec, layout: NodeLayout) -> str:
    return json.dumps({
        "cniVersion": "0.4.0",
        "name": "together-sim",
        "plugins": [{
            "type": "bridge", "bridge": "cni0", "isGateway": True, "ipMasq": True,
            "hairpinMode": True,
            "ipam": {
                "type": "host-local",
                "ranges": [[{"subnet": spec.pool.network.pod_cidr(spec.slot)}]],
                "routes": [{"dst": "0.0.0.0/0"}],
                "dataDir": str(Path(layout.run_dir) / "cni-ipam"),
            },
        }],
    }, indent=1)  # fmt: skip


def _kubelet_yaml(spec: RealNodeSpec, layout: NodeLayout) -> str:
    run_dir = Path(layout.run_dir)
    return f"""apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: /{layout.cgroup}
containerRuntimeEndpoint: unix://{run_dir / "containerd.sock"}
podLogsDir: {run_dir / "pod-logs"}
address: {spec.pool.network.node_ip(spec.slot)}
authentication:
  anonymous: {{enabled: false}}
  webhook: {{enabled: false}}
  x509: {{clientCAFile: {spec.plane.pki.ca_cert}}}
authorization: {{mode: AlwaysAllow}}
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
failSwapOn: false
serializeImagePulls: false
resolvConf: /etc/resolv.conf
evictionHard: {{memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%"}}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
nodeStatusReportFrequency: 10s
"""


def _kubeconfig(spec: RealNodeSpec, cert: Path, key: Path) -> str:
    server = f"https://{spec.pool.network.gateway}:{spec.plane.apiserver_port}"
    return (
        "apiVersion: v1\nkind: Config\n"
        f"clusters: [{{name: sim, cluster: {{server: '{server}', "
        f"certificate-authority: '{spec.plane.pki.ca_cert}'}}}}]\n"
        f"users: [{{name: node, user: {{client-certificate: '{cert}', client-key: '{key}'}}}}]\n"
        "contexts: [{name: sim, context: {cluster: sim, user: node}}]\n"
        "current-context: sim\n"
    )


def node_labels(spec: RealNodeSpec, compute_class: tuple[str, str] | None) -> str:
    """What the kubelet registers the Node with: the KWOK label set to false (KWOK leaves the
    Node alone; the simulator lists every Node carrying the key), the instance type, and the
    compute class of a preemptible node."""
    labels = {"together-sim/kwok": "false", "node.kubernetes.io/instance-type": spec.gpu_type}
    if compute_class is not None:
        labels[compute_class[0]] = compute_class[1]
    return ",".join(f"{k}={v}" for k, v in labels.items())


@dataclass
class RealNode:
    """A kubelet and a containerd of the node's own, started by the node's thread (each process
    dies with that thread, ``PR_SET_PDEATHSIG``), which then watches them: a process that exits
    while the node should run is reported once through ``on_crash``."""

    spec: RealNodeSpec
    labels: str
    on_crash: Callable[[RealNode, str, int], None]
    state: str = field(default="starting", init=False)
    """starting | running | crashed | failed | deleted"""
    error: str = field(default="", init=False)
    started_at: float = field(default_factory=time.monotonic, init=False)
    registered: bool = field(default=False, init=False)
    """The mirror saw its Node (the kubelet registered it)."""
    start_seconds: float | None = field(default=None, init=False)
    """Process start to kubelet running (the Node's registration is seen by the mirror)."""
    phases: dict[str, float] = field(default_factory=dict, init=False)
    """Seconds of each step of the start: certificate (made while the network and images are),
    network, images (the copy of the image seed, with any wait for it), containerd (to its
    socket) and kubelet (to the Node's registration, as the mirror saw it)."""
    _kubelet_at: float | None = field(default=None, init=False)
    journal: Journal
    """Where each change to the host is written before it is made (a child of the pool's)."""
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict, init=False)
    layout: NodeLayout = field(init=False)
    """Where its things are on the host (its sockets and state, files, cgroup)."""
    _stopping: threading.Event = field(default_factory=threading.Event, init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)
    _thread: threading.Thread | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self.layout = NodeLayout.of(self.spec)

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def runtime_cgroup(self) -> str:
        """Where the kubelet and containerd run, beside ``kubepods``: on
        cgroup v2 a process may only be in a cgroup that delegates nothing."""
        return f"{self.layout.cgroup}/runtime"

    @property
    def run_dir(self) -> Path:
        return Path(self.layout.run_dir)

    @property
    def node_dir(self) -> Path:
        return Path(self.layout.node_dir)

    def make(self) -> RealNode:
        """Start the node in its own thread (:meth:`ready` once its kubelet registered it)."""
        self._thread = threading.Thread(
            target=self._run,
            name=f"node-{self.spec.pool.network.netns(self.spec.slot)}",
            daemon=True,
        )
        self._thread.start()
        return self

    # ------------------------------------------------------------------ the node's thread

    def _run(self) -> None:
        try:
            self._start_processes()
            self.state = "running"
            self.start_seconds = time.monotonic() - self.started_at
        except Exception as exc:
            if not self._stopping.is_set():
                self.state, self.error = "failed", str(exc)
                log.error("real node %s failed to start: %s", self.name, exc)
                self.on_crash(self, "start", -1)
        crashed = False
        while not self._stopping.wait(_MONITOR_SECONDS):
            if crashed or self.state != "running":
                continue
            for name, proc in list(self.processes.items()):
                if proc.poll() is not None:
                    crashed = True
                    self.state, self.error = "crashed", f"{name} exited with {proc.returncode}"
                    log.error("real node %s: %s", self.name, self.error)
                    self.on_crash(self, name, proc.returncode)
                    break

    def _spawn(
        self, name: str, args: list[str], *, log_to: Path | None = None
    ) -> subprocess.Popen[bytes]:
        """Start ``name`` in the node's namespace and cgroup (it joins the cgroup before its
        program runs) and write it in the journal (pid and start time); never once
        :meth:`delete` began (it holds the lock while it kills, so nothing starts behind its
        back). A kill between the start and the entry is covered by the cgroup's entry and by
        ``PR_SET_PDEATHSIG``."""
        with self._lock:
            if self._stopping.is_set():
                raise RuntimeError(f"real node {self.name} is being removed")
            netns = f"--net={self.spec.pool.network.netns_path(self.spec.slot)}"
            proc = self.journal.start_process(
                name,
                ["nsenter", netns, "--", *args],
                log_to or self.node_dir / "logs" / f"{name}.log",
                cgroup=self.runtime_cgroup,
            )
            self.processes[name] = proc
        return proc

    def _start_processes(self) -> None:
        """The node's start, in steps whose seconds go in :attr:`phases`. The certificate (a
        few tenths of a second, more on a busy machine) is made while the host is readied: the
        network, then the cgroups and the node's copy of the image seed, in that order, so the
        undo (last first) kills what runs in the cgroups before the network goes."""
        spec, layout, journal = self.spec, self.layout, self.journal
        journal.record("directory", path=str(self.node_dir))
        journal.record("directory", path=str(self.run_dir))
        for directory in (self.node_dir / "logs", self.run_dir / "cni", self.run_dir / "kubelet"):
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        (self.node_dir / "containerd.toml").write_text(_containerd_toml(spec, layout))
        (self.run_dir / "cni" / "10-together-sim.conflist").write_text(_cni_conflist(spec, layout))
        (self.node_dir / "kubelet.yaml").write_text(_kubelet_yaml(spec, layout))
        with ThreadPoolExecutor(1, thread_name_prefix=f"cert-{self.name}") as aside:
            certificate = aside.submit(self._timed, "certificate", self._make_credentials)
            try:
                self._timed("network", lambda: spec.pool.network.add_node(
                    journal, spec.slot, spec.pool.slots, spec.plane.apiserver_port
                ))  # fmt: skip
                # Mounts are made by containerd and the kubelet (pod sandboxes, volumes,
                # overlays): undone after their processes, before any directory (never a
                # removal through a mount).
                journal.record("mounts", paths=[str(self.run_dir), str(self.node_dir)])
                journal.record("cgroup", relative=layout.cgroup)
                cgroups.make_cgroup(layout.cgroup)  # the kubelet's cgroupRoot: kubepods goes below
                cgroups.make_cgroup(self.runtime_cgroup, leaf=True)
                self._timed("images", lambda: spec.pool.seed.copy_to(
                    self.node_dir / "containerd", self._stopping
                ))  # fmt: skip
            finally:
                certificate.result()  # its error, if any, once it has ended
        socket = self.run_dir / "containerd.sock"
        self._spawn(
            "containerd", ["containerd", "--config", str(self.node_dir / "containerd.toml")]
        )
        self._timed("containerd", lambda: wait_ready(
            "containerd",
            socket.exists,
            30.0,
            self.processes,
            self.node_dir / "logs",
            self._stopping,
            f"start of real node {self.name} cancelled",
            interval=0.02,
        ))  # fmt: skip
        self._kubelet_at = time.monotonic()
        self._spawn("kubelet", [
            str(spec.pool.kube_bin / "kubelet"),
            f"--config={self.node_dir / 'kubelet.yaml'}",
            f"--kubeconfig={self.node_dir / 'kubeconfig'}",
            f"--root-dir={self.run_dir / 'kubelet'}",
            f"--cert-dir={self.run_dir / 'kubelet' / 'pki'}",
            f"--hostname-override={spec.name}",
            f"--node-ip={spec.pool.network.node_ip(spec.slot)}",
            f"--node-labels={self.labels}",
            "-v=1",
        ])  # fmt: skip

    def _timed(self, phase: str, step: Callable[[], object]) -> None:
        if self._stopping.is_set():  # being removed: no further change to the host
            raise RuntimeError(f"start of real node {self.name} cancelled")
        began = time.monotonic()
        step()
        self.phases[phase] = round(time.monotonic() - began, 3)

    def _make_credentials(self) -> None:
        for path in node_credential_paths(self.spec.plane.pki, self.spec.name):
            self.journal.record("file", path=str(path))
        cert, key = node_credentials(self.spec.plane.pki, self.spec.name)
        write_private(self.node_dir / "kubeconfig", _kubeconfig(self.spec, cert, key))

    # ------------------------------------------------------------------ removal

    def delete(self) -> list[str]:
        """Remove the node from the host: whatever runs is killed (SIGKILL: the drain window
        is over), then its journal is undone, last change first (processes, cgroups, mounts,
        iptables rules, veth, namespace, certificates, files). Safe from any thread and more
        than once (what an earlier call could not undo is tried again); returns what is left."""
        with self._lock:
            self._stopping.set()  # from here no process starts (:meth:`_spawn`)
            for proc in self.processes.values():
                if proc.poll() is None:
                    proc.kill()
            for proc in self.processes.values():
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=10)
        # The start's thread ends first: a step of the start between its journal entry and its
        # change (a veth, a cgroup) would otherwise make that change after the undo.
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(_START_STEP_SECONDS)
        with self._lock:
            left = self.journal.undo().left
            self.state = "deleted"
        if left:
            log.error("real node %s: left on the host: %s", self.name, ", ".join(left))
        return left

    def ready(self, k8s: Obj | None) -> bool:
        """Once its kubelet registered the Node (remembered: ``ready(None)`` asks only that)."""
        if k8s is not None and not self.registered:
            self.registered = True
            if self._kubelet_at is not None:
                self.phases["kubelet"] = round(time.monotonic() - self._kubelet_at, 3)
        return self.registered

    @property
    def failure(self) -> str:
        """Why the node does not run ("" while it starts or runs): it could not start, or one
        of its processes exited."""
        return self.error if self.state in ("failed", "crashed") else ""

    def may_go(self, pods: list[Obj], drained_at: float | None, now: float) -> bool:
        return removable(self.name, pods, drained_at, now)

    def status(self) -> dict[str, Any]:
        pids = {n: p.pid for n, p in list(self.processes.items()) if p.poll() is None}
        return {
            "slot": self.spec.slot,
            "state": self.state,
            "error": self.error,
            "start_seconds": self.start_seconds,
            "phases": dict(self.phases),
            "registered": self.registered,
            "pids": pids,
            "ip": self.spec.pool.network.node_ip(self.spec.slot),
        }


def removable(name: str, pods: list[Obj], drained_at: float | None, now: float) -> bool:
    """Whether a real node the world removed may go now (``now`` and ``drained_at``: real,
    monotonic seconds). A node without a drain goes at once; a drained one once every pod on
    it has ended, and at the latest :data:`KILL_MARGIN_SECONDS` after the longest grace
    period its pods were given (their own, at most 300 s), counted from the drain's start."""
    running = [p for p in pods if p["spec"].get("nodeName") == name and not terminal(p)]
    if not running or drained_at is None:
        return True
    return now >= drained_at + max(grace_seconds(p) for p in running) + KILL_MARGIN_SECONDS
