"""The network real nodes live on: one bridge the simulator owns and a network namespace per node
with a veth on it, on private addresses only the host and those namespaces use."""

from __future__ import annotations

import ipaddress
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

from together_sim.host.shared import host_lock

if TYPE_CHECKING:
    from together_sim.host.journal import Journal

__all__ = [
    "KUBERNETES_SERVICE_IP",
    "MAX_SLOTS",
    "Network",
    "claim_network",
    "run",
]

KUBERNETES_SERVICE_IP: Final = "10.96.0.1"
"""The ``kubernetes`` Service's address (the API server's ``--service-cluster-ip-range`` is
10.96.0.0/16): pods reach the API server there, as in-cluster clients expect."""
MAX_SLOTS: Final = 50
"""At most this many real nodes at a time (``--real-nodes``): each has its own /24 of pods."""
_PREFIX: Final = "tsim"
_NETNS_DIR: Final = Path("/run/netns")


def run(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run a host command (``ip``, ``iptables``...); a failure names the command and its stderr."""
    done = subprocess.run(list(args), capture_output=True, text=True)
    if check and done.returncode != 0:
        raise RuntimeError(f"`{' '.join(args)}` failed ({done.returncode}): {done.stderr.strip()}")
    return done


@dataclass(frozen=True)
class Network:
    """The simulator's bridge ``tsim<index>`` on 10.199.<index>.0/24 (the host is .1, the real node
    in slot s is .(10+s)); the pods of slot s get 10.(200+s).<index>.0/24. The index is the
    lowest one no other simulator on the machine holds (the bridge's creation claims it)."""

    index: int

    @property
    def bridge(self) -> str:
        return f"{_PREFIX}{self.index}"

    @property
    def gateway(self) -> str:
        """The host's address on the bridge: every API server of this simulator listens here."""
        return f"10.199.{self.index}.1"

    def node_ip(self, slot: int) -> str:
        return f"10.199.{self.index}.{10 + slot}"

    def pod_cidr(self, slot: int) -> str:
        return f"10.{200 + slot}.{self.index}.0/24"

    def netns(self, slot: int) -> str:
        return f"{_PREFIX}{self.index}-n{slot}"

    def host_veth(self, slot: int) -> str:
        return f"{_PREFIX}{self.index}v{slot}"  # at most 15 characters: tsim255v49

    # ---------------------------------------------------------------- a node's namespace

    def add_node(self, journal: Journal, slot: int, slots: int, apiserver_port: int) -> None:
        """Create slot ``slot``'s namespace: its veth on the bridge, its address, routes to the
        pods of every other slot (through that slot's node, on the bridge: the host forwards
        nothing), and the ``kubernetes`` Service's address translated to this cluster's API
        server (there is no kube-proxy). Each change is in ``journal`` before it is made; the
        routes and addresses live in the namespace and go with it."""
        ns, veth, ip = self.netns(slot), self.host_veth(slot), self.node_ip(slot)
        journal.record("netns", name=ns)
        run("ip", "netns", "add", ns)
        journal.record("link", name=veth)
        run("ip", "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns)
        run("ip", "link", "set", veth, "master", self.bridge, "up")
        run("ip", "-n", ns, "addr", "add", f"{ip}/24", "dev", "eth0")
        run("ip", "-n", ns, "link", "set", "lo", "up")
        run("ip", "-n", ns, "link", "set", "eth0", "up")
        run("ip", "-n", ns, "route", "add", "default", "via", self.gateway)
        for other in range(slots):
            if other != slot:
                pods, via = self.pod_cidr(other), self.node_ip(other)
                run("ip", "-n", ns, "route", "add", pods, "via", via)
        target = f"{self.gateway}:{apiserver_port}"
        for chain in ("PREROUTING", "OUTPUT"):
            rule = ["-d", f"{KUBERNETES_SERVICE_IP}/32", "-p", "tcp", "--dport", "443",
                    "-j", "DNAT", "--to-destination", target]  # fmt: skip
            journal.record("iptables", netns=ns, table="nat", chain=chain, rule=rule)
            run("ip", "netns", "exec", ns, "iptables", "-t", "nat", "-A", chain, *rule)

    def netns_path(self, slot: int) -> Path:
        return _NETNS_DIR / self.netns(slot)


def _taken(subnet: ipaddress.IPv4Network) -> bool:
    """Whether an address or route of the host overlaps ``subnet`` (someone else's network)."""
    for line in run("ip", "-4", "-o", "route", "show", "table", "all").stdout.splitlines():
        dest = line.split()[0] if line.split() else ""
        if dest in ("default", "local", "broadcast", "unreachable"):
            dest = line.split()[1] if len(line.split()) > 1 else ""
        try:
            if ipaddress.ip_network(dest, strict=False).overlaps(subnet):
                return True
        except ValueError:
            continue
    return False


def claim_network(journal: Journal, preferred: int | None = None) -> Network:
    """Create the bridge of the lowest free index (``preferred`` first: a restarted simulator
    keeps its addresses, so its kubeconfigs stay valid) and return its network. The bridge is in
    ``journal`` before it is made; the index is chosen under the machine-wide lock, so two
    simulators starting at once never both write down the same bridge."""
    order = ([preferred] if preferred is not None else []) + list(range(256))
    with host_lock():
        for index in dict.fromkeys(order):
            net = Network(index)
            if _taken(ipaddress.IPv4Network(f"10.199.{index}.0/24")):
                continue
            if run("ip", "link", "show", "dev", net.bridge, check=False).returncode == 0:
                continue  # another simulator holds this index
            change = journal.record("link", name=net.bridge)
            if run("ip", "link", "add", net.bridge, "type", "bridge", check=False).returncode:
                journal.forget(change)  # taken meanwhile by a simulator that takes no lock
                continue
            run("ip", "addr", "add", f"{net.gateway}/24", "dev", net.bridge)
            run("ip", "link", "set", net.bridge, "up")
            return net
    raise RuntimeError(
        "together_sim --real-nodes: no free 10.199.<n>.0/24 subnet for the real nodes' bridge "
        "(each simulator with real nodes takes one); stop another simulator or free a subnet"
    )
