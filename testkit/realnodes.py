"""Run real nodes in a test (``--real-nodes``) or say why they cannot run here, and check that a
simulator left nothing of them on the host: processes, mounts, namespaces, cgroups, chains."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from together_sim.host import systemd
from together_sim.host.cgroups import CGROUP_ROOT
from together_sim.host.images import IMAGES_ENV
from together_sim.host.sysctls import SHARED_SETTINGS, read_sysctls
from together_sim.nodes.pool import real_nodes_unavailable
from together_sim.nodes.real import RUN_ROOT

__all__ = [
    "REQUIRED_ENV",
    "alone_with_real_nodes",
    "done_beside_others",
    "host_leftovers",
    "images_or_skip",
    "real_nodes_beside_others",
    "real_nodes_or_skip",
    "sysctls_before",
]

REQUIRED_ENV = "TOGETHER_REAL_NODES_REQUIRED"
"""Set (``make test`` and CI set it) where real nodes must run: a missing piece fails the test
instead of skipping it."""
KUBELET_CHAINS = ("KUBE-FIREWALL", "KUBE-KUBELET-CANARY")
TESTS_LOCK = Path(tempfile.gettempdir()) / "together-sim-tests.real-nodes.lock"
"""Every test simulator with real nodes holds this lock shared while it runs; a test that kills
one holds it exclusively for the whole test. Any start of a simulator with real nodes sweeps the
journals of killed ones, so a test that kills one and then checks what it left must not run
beside another (pytest-xdist runs several test files at once)."""
_alone = False
_shared: set[int] = set()
"""The descriptors this process holds the lock shared with."""


@contextlib.contextmanager
def alone_with_real_nodes() -> Iterator[None]:
    """Run the block with no other test simulator running real nodes (an exclusive lock; what
    this process held shared is let go meanwhile, or it would wait for itself)."""
    global _alone
    with TESTS_LOCK.open("a") as lock:
        for fd in _shared:
            fcntl.flock(fd, fcntl.LOCK_UN)
        fcntl.flock(lock, fcntl.LOCK_EX)
        _alone = True
        try:
            yield
        finally:
            _alone = False
            fcntl.flock(lock, fcntl.LOCK_UN)
            for fd in _shared:
                fcntl.flock(fd, fcntl.LOCK_SH)


def real_nodes_beside_others() -> int | None:
    """Hold the lock shared while a test simulator with real nodes runs: a descriptor to give
    :func:`done_beside_others` when it stops (None inside :func:`alone_with_real_nodes`)."""
    if _alone:
        return None
    fd = os.open(TESTS_LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    fcntl.flock(fd, fcntl.LOCK_SH)
    _shared.add(fd)
    return fd


def done_beside_others(fd: int | None) -> None:
    if fd is not None:
        _shared.discard(fd)
        os.close(fd)


def _skip_or_fail(reason: str) -> None:
    if os.environ.get(REQUIRED_ENV):
        pytest.fail(f"{reason} (${REQUIRED_ENV} is set: real nodes must run here)")
    pytest.skip(reason)


def images_or_skip() -> Path:
    """The real nodes' image archives (``$TOGETHER_IMAGES_DIR``, what tools/images/build.sh
    prints)."""
    where = os.environ.get(IMAGES_ENV)
    if not where or not (Path(where) / "pause.tar").is_file():
        _skip_or_fail(
            f"no real-node images: ${IMAGES_ENV} is {where!r}; "
            f'export {IMAGES_ENV}="$(tools/images/build.sh)"'
        )
    return Path(str(where))


def real_nodes_or_skip(kube_bin: Path) -> Path:
    """The images directory, once this machine can run real nodes (root, containerd, runc, CNI
    plugins, the kubelet); otherwise the test skips and says what is missing."""
    reason = real_nodes_unavailable(kube_bin)
    if reason:
        _skip_or_fail(reason)
    return images_or_skip()


def _chains() -> list[str]:
    found = []
    for table in ("filter", "nat", "mangle"):
        done = subprocess.run(["iptables", "-t", table, "-S"], capture_output=True, text=True)
        found += [
            f"iptables {table} {line}"
            for line in done.stdout.splitlines()
            if any(chain in line for chain in KUBELET_CHAINS)
        ]
    return found


def host_leftovers(state_dir: Path, network: int, sysctls: dict[str, str]) -> list[str]:
    """What the simulator that used ``state_dir`` and bridge ``tsim<network>`` left on the host
    (empty: nothing), item by item: a process (kubelet, containerd, shim or container, by its
    command line or its cgroup), a mount, a network namespace or link, a cgroup of its nodes
    (``kubepods`` lives there), a kubelet iptables chain in the host's namespace, and the
    kernel settings the kubelet rewrites, against ``sysctls`` read before it started."""
    left: list[str] = []
    ours = (str(state_dir), f"{RUN_ROOT}/tsim{network}-")
    scope = systemd.scope_unit(network)
    cgroup_marks = (f"/together-sim/tsim{network}-", f"/{scope}/")
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            cgroups = (entry / "cgroup").read_text()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state == "Z":  # exited, holding nothing but its pid until its parent reaps it
            continue
        if any(o in cmdline for o in ours) or any(m in cgroups for m in cgroup_marks):
            left.append(f"process {entry.name}: {cmdline.strip()[:120]}")
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        point = line.split()[4]
        if any(point.startswith(o) for o in ours) or f"/netns/tsim{network}-" in point:
            left.append(f"mount {point}")
    netns = Path("/run/netns")
    if netns.is_dir():
        left += [f"netns {n.name}" for n in netns.iterdir() if n.name.startswith(f"tsim{network}-")]
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    for line in links.splitlines():
        name = line.split(":")[1].strip().split("@")[0]
        if name == f"tsim{network}" or name.startswith(f"tsim{network}v"):
            left.append(f"link {name}")
    for hierarchy in CGROUP_ROOT.iterdir():
        top = hierarchy / "together-sim"
        if top.is_dir():
            left += [f"cgroup {d}" for d in top.glob(f"tsim{network}-*")]
        if (hierarchy / "kubepods").is_dir():
            left.append(f"cgroup {hierarchy / 'kubepods'}")
    if (scope_dir := CGROUP_ROOT / systemd.scope_cgroup(scope)).is_dir():  # v2 with systemd
        left.append(f"cgroup {scope_dir}")
    left += _chains()
    if SHARED_SETTINGS.exists():  # another simulator holds real nodes: the settings are its
        holders = json.loads(SHARED_SETTINGS.read_text())["holders"]
        left += [f"sysctls still held by {h}" for h in holders if h.endswith(f"{state_dir}/kube")]
    else:
        now = read_sysctls()
        left += [f"sysctl {k}={now[k]} (was {v})" for k, v in sysctls.items() if now[k] != v]
    return left


def sysctls_before() -> dict[str, str]:
    """The kernel settings as they were before any real node of any simulator on the machine
    (what the last one out restores), to give :func:`host_leftovers`."""
    if SHARED_SETTINGS.exists():
        original: dict[str, str] = json.loads(SHARED_SETTINGS.read_text())["original"]
        return original
    return read_sysctls()
