"""The processes of one cluster's control plane (etcd, kube-apiserver, kube-controller-manager,
kube-scheduler, KWOK) on loopback with ports chosen at run time, none outliving the simulator."""

from __future__ import annotations

import json
import os
import random
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import httpx

from together_sim.host.network import KUBERNETES_SERVICE_IP
from together_sim.host.processes import die_with_parent, wait_ready
from together_sim.nodes import NODE_LABEL
from together_sim.nodes.real import JoinedPlane
from together_sim.plane.pki import ClusterPki, ensure_pki, kubeconfig_yaml, write_private
from together_sim.timings import CONTROL_PLANE_START_SECONDS

__all__ = ["BINARIES", "NODE_LABEL", "ControlPlane", "Ports", "joined"]

BINARIES: Final = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok")

_STAGES: Final = Path(__file__).parent / "stages"


def _free_ports(count: int) -> list[int]:
    """``count`` distinct loopback ports that are free now, below the kernel's ephemeral range:
    a port from that range can be taken meanwhile as the local port of any outgoing
    connection on the machine, and a listener could then not bind it."""
    try:
        low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    low = max(low, 2048)
    held: list[socket.socket] = []
    try:
        while len(held) < count:
            candidate = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                candidate.bind(("127.0.0.1", random.randrange(1024, low)))
            except OSError:
                candidate.close()
                continue
            held.append(candidate)
        return [s.getsockname()[1] for s in held]
    finally:
        for s in held:
            s.close()


@dataclass(frozen=True)
class Ports:
    """Loopback ports of one control plane, kept in ``ports.json`` so a restarted simulator
    serves each cluster's API at the address its kubeconfig already names."""

    etcd_client: int
    etcd_peer: int
    apiserver: int
    kwok_node: int

    @classmethod
    def load_or_pick(cls, path: Path) -> Ports:
        if path.exists():
            return cls(**json.loads(path.read_text()))
        ports = cls(*_free_ports(4))
        path.write_text(json.dumps(ports.__dict__))
        return ports


@dataclass
class ControlPlane:
    """One cluster's control plane under ``root`` (pki/, etcd/, logs/, kubeconfig).

    No orphans: every process is started with ``PR_SET_PDEATHSIG`` = SIGKILL, so the kernel kills it
    when the thread that started it ends, which covers a simulator killed by SIGKILL. Each process
    gets its own session, so a Ctrl-C in the simulator's terminal reaches only the simulator, which
    then stops its control planes in order (:meth:`ControlPlane.stop`).
    """

    root: Path
    bin_dir: Path
    cluster_id: str
    cluster_name: str
    host: str = "127.0.0.1"
    """Where the API server listens: loopback, or with real nodes the host's address on their
    bridge (reachable from the host and from every real node's namespace, nowhere else)."""
    pki: ClusterPki = field(init=False)
    ports: Ports = field(init=False)
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict, init=False)
    start_seconds: float | None = field(default=None, init=False)
    cancelled: threading.Event = field(default_factory=threading.Event, init=False)
    """Set to give up a start in progress (the cluster went away, or the simulator stops)."""
    start_timeout: float = CONTROL_PLANE_START_SECONDS
    """How long each step of :meth:`start` may take before the cluster's control plane fails."""

    def __post_init__(self) -> None:
        # Owner-only: the kubeconfig holds the cluster's admin key, etcd/ its secrets.
        self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
        addresses = () if self.host == "127.0.0.1" else (self.host, KUBERNETES_SERVICE_IP)
        self.pki = ensure_pki(self.root / "pki", self.cluster_id, addresses)
        self.ports = Ports.load_or_pick(self.root / "ports.json")
        write_private(self.kubeconfig_path, self.kubeconfig())

    @property
    def server(self) -> str:
        return f"https://{self.host}:{self.ports.apiserver}"

    @property
    def kubeconfig_path(self) -> Path:
        return self.root / "kubeconfig"

    def kubeconfig(self) -> str:
        return kubeconfig_yaml(self.pki, self.cluster_name, self.server)

    def http_client(self, timeout: float = 10.0) -> httpx.Client:
        tls = ssl.create_default_context(cafile=str(self.pki.ca_cert))
        tls.load_cert_chain(str(self.pki.admin_cert), str(self.pki.admin_key))
        return httpx.Client(base_url=self.server, verify=tls, timeout=timeout)

    # ------------------------------------------------------------------ processes

    def _spawn(self, name: str, args: list[str]) -> None:
        logs = self.root / "logs"
        logs.mkdir(exist_ok=True)
        with (logs / f"{name}.log").open("ab") as log:
            self.processes[name] = subprocess.Popen(
                [str(self.bin_dir / name), *args],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                cwd=self.root,
                start_new_session=True,
                preexec_fn=die_with_parent,
                env={**os.environ, "GOMAXPROCS": "2"},
            )

    def _wait(self, what: str, ready: Callable[[], bool], timeout: float) -> None:
        wait_ready(
            what,
            ready,
            timeout,
            self.processes,
            self.root / "logs",
            self.cancelled,
            f"start of cluster {self.cluster_id}'s control plane cancelled",
            of=f" of cluster {self.cluster_id}",
            ignore=(httpx.HTTPError,),
            more_time="a slow host (a VM without KVM) needs a longer --control-plane-timeout",
        )

    def start(self) -> None:
        """Start every process and return once the API server is ready (``/readyz``); each step
        may take :attr:`start_timeout` seconds."""
        began, timeout = time.monotonic(), self.start_timeout
        p, pki, kc = self.ports, self.pki, str(self.kubeconfig_path)
        self._spawn("etcd", [
            "--name", "default", "--data-dir", str(self.root / "etcd"),
            "--listen-client-urls", f"http://127.0.0.1:{p.etcd_client}",
            "--advertise-client-urls", f"http://127.0.0.1:{p.etcd_client}",
            "--listen-peer-urls", f"http://127.0.0.1:{p.etcd_peer}",
            "--initial-advertise-peer-urls", f"http://127.0.0.1:{p.etcd_peer}",
            "--initial-cluster", f"default=http://127.0.0.1:{p.etcd_peer}",
            "--unsafe-no-fsync", "--log-level", "warn", "--quota-backend-bytes", "268435456",
        ])  # fmt: skip
        with httpx.Client(timeout=2.0) as etcd:
            url = f"http://127.0.0.1:{p.etcd_client}/health"
            self._wait("etcd", lambda: etcd.get(url).status_code == 200, timeout)
        self._spawn("kube-apiserver", [
            f"--etcd-servers=http://127.0.0.1:{p.etcd_client}",
            f"--bind-address={self.host}", f"--advertise-address={self.host}",
            "--kubelet-preferred-address-types=InternalIP",
            f"--kubelet-client-certificate={pki.admin_cert}",
            f"--kubelet-client-key={pki.admin_key}",
            f"--secure-port={p.apiserver}",
            f"--tls-cert-file={pki.server_cert}", f"--tls-private-key-file={pki.server_key}",
            f"--client-ca-file={pki.ca_cert}",
            "--authorization-mode=Node,RBAC",
            f"--service-account-key-file={pki.service_account_pub}",
            f"--service-account-signing-key-file={pki.service_account_key}",
            "--service-account-issuer=https://kubernetes.default.svc",
            "--service-cluster-ip-range=10.96.0.0/16",
            "--profiling=false", "--enable-priority-and-fairness=false",
        ])  # fmt: skip
        with self.http_client(timeout=2.0) as api:
            self._wait("kube-apiserver", lambda: api.get("/readyz").status_code == 200, timeout)
        self._spawn("kube-controller-manager", [
            f"--kubeconfig={kc}", "--leader-elect=false", "--secure-port=0",
            f"--service-account-private-key-file={pki.service_account_key}",
            f"--root-ca-file={pki.ca_cert}",
            "--controllers=*,-serviceaccount-token", "--profiling=false",
        ])  # fmt: skip
        self._spawn("kube-scheduler", [
            f"--kubeconfig={kc}", "--leader-elect=false", "--secure-port=0", "--profiling=false",
        ])  # fmt: skip
        stages = self.root / "kwok-stages.yaml"
        stages.write_text(
            "\n---\n".join(
                f.read_text()
                for f in [
                    *sorted((self.bin_dir / "kwok-stages" / "node").glob("*.yaml")),
                    *sorted(_STAGES.glob("*.yaml")),
                ]
            )
        )
        self._spawn("kwok", [
            f"--kubeconfig={kc}", f"--config={stages}",
            f"--manage-nodes-with-label-selector={NODE_LABEL}=true",
            "--manage-all-nodes=false",
            "--node-ip=127.0.0.1", f"--node-port={p.kwok_node}",
            f"--server-address=127.0.0.1:{p.kwok_node}",
            "--node-lease-duration-seconds=40",
        ])  # fmt: skip
        self.start_seconds = time.monotonic() - began

    def alive(self) -> bool:
        return bool(self.processes) and all(p.poll() is None for p in self.processes.values())

    def terminate(self) -> None:
        """Signal every process without waiting: SIGKILL to all but etcd, which gets SIGTERM.

        Only etcd keeps state (the cluster's objects, which survive a simulator restart); the
        API server, controller manager, scheduler and KWOK hold nothing a graceful stop would
        save, and the API server's graceful stop alone takes seconds on a loaded machine."""
        for name, proc in list(self.processes.items()):
            if proc.poll() is None:
                if name == "etcd":
                    proc.terminate()
                else:
                    proc.kill()

    def stop(self, timeout: float = 10.0) -> None:
        """:meth:`terminate`, then SIGKILL what is left after ``timeout``; returns once every
        process has ended. Safe to call from two threads (the mirror's and the hub's close)."""
        self.terminate()
        procs = list(self.processes.values())
        deadline = time.monotonic() + timeout
        for proc in procs:
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        # Forget only what was waited for: a start in progress may have spawned one meanwhile.
        for name, proc in list(self.processes.items()):
            if proc in procs:
                self.processes.pop(name, None)


def joined(plane: ControlPlane) -> JoinedPlane:
    """What a real node joins of ``plane``: its directory, its API server's port, its PKI."""
    return JoinedPlane(plane.root, plane.ports.apiserver, plane.pki)
