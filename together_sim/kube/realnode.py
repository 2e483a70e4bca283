"""One real node: its own containerd and kubelet in its own network namespace and cgroup, so a
pod's process gets a real SIGTERM; :meth:`RealNode.delete` undoes everything the node did."""

from __future__ import annotations

import contextlib
import json
import logging
import shutil
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Final

from together_sim.kube import hostfs
from together_sim.kube.hostnet import Network
from together_sim.kube.images import NodeImages
from together_sim.kube.pki import ClusterPki, node_credentials
from together_sim.kube.processes import _die_with_parent, wait_ready

__all__ = ["RUN_ROOT", "NodeRecord", "RealNode", "RealNodeSpec", "remove_recorded"]

RUN_ROOT: Final = hostfs.RUN_DIR
"""Sockets, containerd's state and the kubelet's directory: short paths, since a unix socket's
path has at most 107 bytes (the cluster's directory under a state dir can be longer)."""
CNI_BIN: Final = Path("/usr/lib/cni")
RUNC: Final = "/usr/sbin/runc"
_MONITOR_SECONDS: Final = 0.5

log = logging.getLogger("together_sim.kube")


@dataclass(frozen=True)
class RealNodeSpec:
    """What one real node is: the simulator's node name, where it lives and what it joins."""

    name: str
    slot: int
    slots: int
    preemptible: bool
    gpu_type: str
    cluster_dir: Path
    kube_bin: Path
    images: NodeImages
    network: Network
    apiserver_port: int
    pki: ClusterPki


@dataclass(frozen=True)
class NodeRecord:
    """What a node put on the host, written before it starts, so a simulator that was killed
    removes it at its next start (:func:`remove_recorded`)."""

    name: str
    slot: int
    network_index: int
    run_dir: str
    node_dir: str
    cgroup: str

    @classmethod
    def of(cls, spec: RealNodeSpec) -> NodeRecord:
        netns = spec.network.netns(spec.slot)
        return cls(
            name=spec.name,
            slot=spec.slot,
            network_index=spec.network.index,
            run_dir=str(RUN_ROOT / netns),
            node_dir=str(spec.cluster_dir / "nodes" / spec.name),
            cgroup=f"together-sim/{netns}",
        )


def remove_recorded(record: NodeRecord) -> list[str]:
    """Undo everything a node did to the host, in the order that lets each step succeed:
    processes (kubelet, containerd, shims, containers: all in the node's cgroup), mounts, the
    network namespace (its veth, routes and the kubelet's iptables chains go with it), the
    cgroups, the files. Returns what could not be removed (empty: the host is clean)."""
    left: list[str] = []
    survivors = hostfs.kill_cgroup(record.cgroup)
    left += [f"process {pid}" for pid in survivors]
    run_dir, node_dir = Path(record.run_dir), Path(record.node_dir)
    left += [f"mount {m}" for m in hostfs.unmount_under(run_dir, node_dir)]
    Network(record.network_index).remove_node(record.slot)
    left += [f"cgroup {c}" for c in hostfs.remove_cgroup(record.cgroup)]
    if not any(item.startswith("mount") for item in left):  # never delete through a mount
        shutil.rmtree(run_dir, ignore_errors=True)
        shutil.rmtree(node_dir, ignore_errors=True)
    return left


def _containerd_toml(spec: RealNodeSpec, rec: NodeRecord) -> str:
    run_dir, node_dir = Path(rec.run_dir), Path(rec.node_dir)
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
  sandbox_image = "{spec.images.sandbox}"
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


def _cni_conflist(spec: RealNodeSpec, rec: NodeRecord) -> str:
    return json.dumps({
        "cniVersion": "0.4.0",
        "name": "together-sim",
        "plugins": [{
            "type": "bridge", "bridge": "cni0", "isGateway": True, "ipMasq": True,
            "hairpinMode": True,
            "ipam": {
                "type": "host-local",
                "ranges": [[{"subnet": spec.network.pod_cidr(spec.slot)}]],
                "routes": [{"dst": "0.0.0.0/0"}],
                "dataDir": str(Path(rec.run_dir) / "cni-ipam"),
            },
        }],
    }, indent=1)  # fmt: skip


def _kubelet_yaml(spec: RealNodeSpec, rec: NodeRecord) -> str:
    run_dir = Path(rec.run_dir)
    return f"""apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: /{rec.cgroup}
containerRuntimeEndpoint: unix://{run_dir / "containerd.sock"}
podLogsDir: {run_dir / "pod-logs"}
address: {spec.network.node_ip(spec.slot)}
authentication:
  anonymous: {{enabled: false}}
  webhook: {{enabled: false}}
  x509: {{clientCAFile: {spec.pki.ca_cert}}}
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
    server = f"https://{spec.network.gateway}:{spec.apiserver_port}"
    return (
        "apiVersion: v1\nkind: Config\n"
        f"clusters: [{{name: sim, cluster: {{server: '{server}', "
        f"certificate-authority: '{spec.pki.ca_cert}'}}}}]\n"
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

    kind: ClassVar[str] = "real"
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
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict, init=False)
    record: NodeRecord = field(init=False)
    _stopping: threading.Event = field(default_factory=threading.Event, init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)
    _thread: threading.Thread | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self.record = NodeRecord.of(self.spec)

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def run_dir(self) -> Path:
        return Path(self.record.run_dir)

    @property
    def node_dir(self) -> Path:
        return Path(self.record.node_dir)

    def start(self) -> RealNode:
        self._thread = threading.Thread(
            target=self._run, name=f"node-{self.spec.network.netns(self.spec.slot)}", daemon=True
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

    def _spawn(self, name: str, args: list[str]) -> subprocess.Popen[bytes]:
        """Start ``name`` in the node's namespace and cgroup; never once :meth:`delete` began
        (it holds the lock while it kills, so nothing starts behind its back)."""
        logs = self.node_dir / "logs"
        with self._lock, (logs / f"{name}.log").open("ab") as out:
            if self._stopping.is_set():
                raise RuntimeError(f"real node {self.name} is being removed")
            proc = subprocess.Popen(
                ["nsenter", f"--net={self.spec.network.netns_path(self.spec.slot)}", "--", *args],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=out,
                start_new_session=True,
                preexec_fn=_die_with_parent,  # only prctl runs between fork and exec
            )
            hostfs.move_to_cgroup(proc.pid, self.record.cgroup)
            self.processes[name] = proc
        return proc

    def _start_processes(self) -> None:
        spec, rec = self.spec, self.record
        for directory in (self.node_dir / "logs", self.run_dir / "cni", self.run_dir / "kubelet"):
            directory.mkdir(parents=True, exist_ok=True)
        (self.node_dir / "containerd.toml").write_text(_containerd_toml(spec, rec))
        (self.run_dir / "cni" / "10-together-sim.conflist").write_text(_cni_conflist(spec, rec))
        (self.node_dir / "kubelet.yaml").write_text(_kubelet_yaml(spec, rec))
        cert, key = node_credentials(spec.pki, spec.name)
        (self.node_dir / "kubeconfig").write_text(_kubeconfig(spec, cert, key))
        spec.network.add_node(spec.slot, spec.slots, spec.apiserver_port)
        hostfs.make_cgroup(rec.cgroup)
        socket = self.run_dir / "containerd.sock"
        config = self.node_dir / "containerd.toml"
        self._spawn("containerd", ["containerd", "--config", str(config)])
        wait_ready(
            "containerd",
            socket.exists,
            30.0,
            self.processes,
            self.node_dir / "logs",
            self._stopping,
            f"start of real node {self.name} cancelled",
            interval=0.05,
        )
        imports = [  # at once: each is mostly waiting on containerd's unpacking
            (archive, subprocess.Popen(
                ["ctr", "-a", str(socket), "-n", "k8s.io", "images", "import", str(archive)],
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            ))
            for archive in spec.images.archives
        ]  # fmt: skip
        for archive, proc in imports:
            _, err = proc.communicate()
            if proc.returncode != 0:
                raise RuntimeError(f"image archive {archive} does not import: {err.strip()[-400:]}")
        self._spawn("kubelet", [
            str(spec.kube_bin / "kubelet"),
            f"--config={self.node_dir / 'kubelet.yaml'}",
            f"--kubeconfig={self.node_dir / 'kubeconfig'}",
            f"--root-dir={self.run_dir / 'kubelet'}",
            f"--cert-dir={self.run_dir / 'kubelet' / 'pki'}",
            f"--hostname-override={spec.name}",
            f"--node-ip={spec.network.node_ip(spec.slot)}",
            f"--node-labels={self.labels}",
            "-v=1",
        ])  # fmt: skip

    # ------------------------------------------------------------------ removal

    def delete(self) -> list[str]:
        """Remove the node from the host: whatever runs is killed (SIGKILL: the drain window
        is over), kubelet and containerd stop, then its mounts, namespace, cgroups and files go.
        Safe from any thread and more than once; returns what could not be removed."""
        with self._lock:
            if self.state == "deleted":
                return []
            self._stopping.set()
            for proc in self.processes.values():
                if proc.poll() is None:
                    proc.kill()
            for proc in self.processes.values():
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=10)
            left = remove_recorded(self.record)
            for suffix in (".crt", ".key"):
                (self.spec.pki.root / f"node-{self.name}{suffix}").unlink(missing_ok=True)
            self.state = "deleted"
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(5.0)
        if left:
            log.error("real node %s: left on the host: %s", self.name, ", ".join(left))
        return left

    def status(self) -> dict[str, Any]:
        pids = {n: p.pid for n, p in list(self.processes.items()) if p.poll() is None}
        return {
            "slot": self.spec.slot,
            "state": self.state,
            "error": self.error,
            "start_seconds": self.start_seconds,
            "registered": self.registered,
            "pids": pids,
            "ip": self.spec.network.node_ip(self.spec.slot),
        }
