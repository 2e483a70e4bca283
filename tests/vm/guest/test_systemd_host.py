"""Inside the VM, a cgroup v2 host with systemd: a simulator's real nodes keep their cgroups in a
delegated scope of its own, where the kubelet's and containerd's cgroupfs drivers put the same
pods, and neither a stop nor a SIGKILL followed by ``cleanup`` leaves a unit of ours behind."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path
from typing import Any

from testkit.hostsnap import bridge_index, leftovers, snapshot
from testkit.wait import wait_for
from tests.integration.test_real_node_crashes import _cleanup, _cluster, _pods_running, _sim
from together_sim.host import cgroups, processes, systemd

SLEEPER = "import time; time.sleep(3600)"
"""The command of the pods ``_pods_running`` starts."""


def _systemctl(*args: str) -> str:
    return subprocess.run(["systemctl", *args], capture_output=True, text=True).stdout.strip()


def _our_units() -> list[str]:
    return _systemctl("list-units", "--all", "--plain", "--no-legend", "together-sim*").splitlines()


def _failed_units() -> list[str]:
    return _systemctl("list-units", "--failed", "--plain", "--no-legend").splitlines()


def _cgroup(pid: int) -> str:
    return Path(f"/proc/{pid}/cgroup").read_text().strip().removeprefix("0::")


def _sleepers() -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if SLEEPER in (entry / "cmdline").read_bytes().decode(errors="replace"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def _host_is_clean(unit: str) -> None:
    assert _our_units() == []
    assert _failed_units() == []
    assert not (cgroups.CGROUP_ROOT / systemd.scope_cgroup(unit)).exists()
    assert not (cgroups.CGROUP_ROOT / cgroups.PARENT).exists()  # nothing at the root's level


def _check_placement(unit: str, index: int, status: dict[str, dict[str, Any]]) -> None:
    scope = f"/{systemd.scope_cgroup(unit)}"
    assert _systemctl("show", "--property=Delegate", "--value", unit) == "yes"
    assert _systemctl("show", "--property=ActiveState", "--value", unit) == "active"
    nodes = [n for c in status.values() for n in c["real_nodes"].values()]
    assert len(nodes) == 2
    for node in nodes:
        for name in ("kubelet", "containerd"):
            where = _cgroup(node["pids"][name])
            assert where.startswith(f"{scope}/tsim{index}-n") and where.endswith("/runtime"), where
    # The kubelet (cgroupfs) made each pod's cgroup below its cgroupRoot in the scope, and
    # containerd's runc (SystemdCgroup = false) put the container's process into it.
    sleepers = _sleepers()
    assert len(sleepers) == 2
    for pid in sleepers:
        where = _cgroup(pid)
        assert where.startswith(f"{scope}/tsim{index}-n") and "/kubepods/" in where, where


def test_the_nodes_cgroups_live_in_a_delegated_scope_that_a_stop_removes(
    tmp_path: Path, kube_bin: Path
) -> None:
    assert _failed_units() == []
    before = snapshot()
    sim = _sim(tmp_path, kube_bin)
    with sim:
        pid, index = sim.pid, bridge_index(sim.pid)
        unit = systemd.scope_unit(index)
        _, kube = _cluster(sim)
        try:
            _pods_running(kube)
            _check_placement(unit, index, sim.kubernetes_status())
        finally:
            kube.close()
    assert sim.returncode == 0
    _host_is_clean(unit)
    assert leftovers(before, snapshot(), besides=pid, ours=index, marks=(str(tmp_path),)) == []


def test_after_a_sigkill_the_scope_holds_the_pods_until_cleanup_stops_it(
    tmp_path: Path, kube_bin: Path
) -> None:
    before = snapshot()
    sim = _sim(tmp_path, kube_bin)
    with sim:
        pid, index = sim.pid, bridge_index(sim.pid)
        unit = systemd.scope_unit(index)
        _, kube = _cluster(sim)
        try:
            _pods_running(kube)
        finally:
            kube.close()
        os.kill(pid, signal.SIGKILL)
        wait_for(
            lambda: processes.process_started(pid) is None or processes.zombie(pid),
            "the simulator to be gone",
            timeout=30,
        )
    # The containers (detached from containerd) and the scope's holder outlive the simulator.
    assert _systemctl("show", "--property=ActiveState", "--value", unit) == "active"
    assert len(_sleepers()) == 2
    done = _cleanup()
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"systemd scope {unit}" in done.stdout, done.stdout
    assert _sleepers() == []
    _host_is_clean(unit)
    assert leftovers(before, snapshot(), besides=pid, ours=index, marks=(str(tmp_path),)) == []
