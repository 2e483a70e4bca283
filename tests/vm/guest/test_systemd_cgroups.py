"""Inside the VM, a cgroup v2 host with systemd: a real-node pool's cgroups go in a delegated
scope of its own, where a node's cgroup gets the controllers the kubelet needs, and the journal's
undo (a stop) or ``python -m together_sim cleanup`` after a SIGKILL leaves no unit behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from testkit.wait import wait_for
from together_sim.host import cgroups, processes, shared, systemd
from together_sim.host.journal import Journal, Owner
from together_sim.nodes.pool import place_cgroups

INDEX = 7
"""A bridge index of the test's own (no simulator runs in the guest meanwhile)."""
UNIT = systemd.scope_unit(INDEX)
KUBELET_NEEDS = set(systemd.KUBELET_CONTROLLERS) & set(
    (cgroups.CGROUP_ROOT / "cgroup.controllers").read_text().split()
)
"""What the kubelet refuses to start without, in its cgroupRoot (hugetlb among them)."""
ABOVE_SCOPE = systemd.others_above_scope()
"""What the root and system.slice enable beyond systemd's own controllers, as the guest booted."""


def _systemctl(*args: str) -> str:
    return subprocess.run(["systemctl", *args], capture_output=True, text=True).stdout.strip()


def _our_units() -> list[str]:
    return _systemctl("list-units", "--all", "--plain", "--no-legend", "together-sim*").splitlines()


def _failed_units() -> list[str]:
    return _systemctl("list-units", "--failed", "--plain", "--no-legend").splitlines()


def _no_trace_left() -> None:
    assert _our_units() == []
    assert _failed_units() == []
    assert not (cgroups.CGROUP_ROOT / systemd.scope_cgroup(UNIT)).exists()
    assert not (cgroups.CGROUP_ROOT / cgroups.PARENT).exists()
    assert systemd.others_above_scope() == ABOVE_SCOPE  # no hugetlb left enabled there
    assert not systemd.above_scope().path.exists()


def _node_in(journal: Journal, parent: str, out: Path) -> tuple[str, int]:
    """A node's cgroup below ``parent`` as a real node makes it, and a process in its leaf."""
    node = f"{parent}/tsim{INDEX}-n0"
    journal.record("cgroup", relative=node)
    cgroups.make_cgroup(node)
    cgroups.make_cgroup(f"{node}/runtime", leaf=True)
    proc = journal.start_process("sleeper", ["sleep", "1000"], out, cgroup=f"{node}/runtime")
    wait_for(
        lambda: Path(f"/proc/{proc.pid}/cgroup").read_text().strip() == f"0::/{node}/runtime",
        "the process to join its node's leaf",
        timeout=30,
    )
    return node, proc.pid


def test_the_pools_cgroups_are_in_a_delegated_scope_and_a_stop_removes_it(tmp_path: Path) -> None:
    assert systemd.manages_cgroups()
    assert _failed_units() == []
    owner = Owner.me()
    journal = Journal.create(shared.JOURNALS / f"pool-{owner.pid}-{owner.started}-vm.jsonl", owner)
    parent, holder = place_cgroups(journal, INDEX)
    node, pid = _node_in(journal, parent, tmp_path / "sleeper.log")
    # What the kubelet (cgroupfs, cgroupRoot = the node's cgroup) needs for kubepods below it;
    # the root of a fresh systemd host delegates only what its units asked for (no cpu), and a
    # Delegate=yes scope gets only what systemd manages (no hugetlb).
    node_dir = cgroups.CGROUP_ROOT / node
    assert set((node_dir / "cgroup.controllers").read_text().split()) >= KUBELET_NEEDS
    assert set((node_dir / "cgroup.subtree_control").read_text().split()) >= KUBELET_NEEDS
    # ... because it is in a scope of the pool's own, which systemd delegates and leaves alone.
    assert parent == f"system.slice/{UNIT}" and holder is not None
    assert _systemctl("show", "--property=Delegate", "--value", UNIT) == "yes"
    assert _systemctl("show", "--property=ActiveState", "--value", UNIT) == "active"

    done = journal.undo()
    holder.wait(10)
    assert done.left == []
    assert f"systemd scope {UNIT}" in done.removed
    assert processes.process_started(pid) is None or processes.zombie(pid)
    _no_trace_left()


CRASHING_POOL = """
import sys, time
from pathlib import Path
from together_sim.host import shared
from together_sim.host.journal import Journal, Owner
from tests.vm.guest.test_systemd_cgroups import INDEX, _node_in
from together_sim.nodes.pool import place_cgroups
owner = Owner.me()
journal = Journal.create(shared.JOURNALS / f"pool-{owner.pid}-{owner.started}-vm.jsonl", owner)
parent, _ = place_cgroups(journal, INDEX)
_node_in(journal, parent, Path(sys.argv[1]))
print("ready", flush=True)
time.sleep(1000)
"""


def test_after_a_sigkill_the_scope_stays_until_cleanup_stops_it(tmp_path: Path) -> None:
    pool = subprocess.Popen(
        [sys.executable, "-c", CRASHING_POOL, str(tmp_path / "sleeper.log")],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert pool.stdout is not None and pool.stdout.readline() == "ready\n"
    os.kill(pool.pid, signal.SIGKILL)
    pool.wait()
    # The holder and the node's process outlive the pool: the scope is still there.
    assert _systemctl("show", "--property=ActiveState", "--value", UNIT) == "active"
    done = subprocess.run(
        [sys.executable, "-m", "together_sim", "cleanup"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"removed systemd scope {UNIT}" in done.stdout, done.stdout
    _no_trace_left()
