"""Inside the VM, a cgroup v2 host with systemd: a simulator with real nodes brings a whole
cluster to Ready, the drill says ``safe`` for a workload that keeps together_worker's contract
and ``unsafe`` (``SIGTERM_IGNORED``) for one that ignores SIGTERM, a pod Together reclaims gets
SIGTERM, and a SIGKILL of the simulator followed by ``python -m together_sim cleanup`` leaves
the host as before: no process, mount, link, cgroup, scope or failed unit of ours.

One cluster serves every step, in file order: under TCG one control plane takes about 156 s to
start, so each step a cluster of its own would not fit ``make test-vm``'s 15 minutes. The drill
runs on it as on any existing cluster (``--kubeconfig``: the drain done by hand, by the drill's
own cordon and eviction), and Together's reclaim is the simulator's own."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from testkit.kube import kube_bin_or_skip
from testkit.realnodes import host_leftovers, images_or_skip, sysctls_before
from testkit.wait import wait_for
from together_drill.kube import PodWatch, terminated
from together_drill.world import World
from together_sim.host import cgroups, processes, systemd
from together_sim.nodes.pool import RECORD_FILE

ROOT = Path(__file__).resolve().parents[3]
PYTHON = "localhost/together-python:3.11"
GRACE = {"good": "300", "ignores": "6"}
"""Seconds. The good workload gets Together's drain window: it exits as soon as it saved, and
under TCG a checkpoint's fsync takes seconds (with the host's disk busy, a minute was once not
enough). The one that ignores SIGTERM costs its whole grace."""
SLOW_START = 900.0
"""Each part of the world's start (simulator, control plane, real nodes) and a Job's pod: TCG
runs a control plane's start in about 156 s, five to ten times a loaded laptop's."""
CLAIM = "drill-checkpoints"


def _systemctl(*args: str) -> list[str]:
    done = subprocess.run(["systemctl", *args], capture_output=True, text=True)
    return done.stdout.strip().splitlines()


def _failed_units() -> list[str]:
    return _systemctl("list-units", "--failed", "--plain", "--no-legend")


def _above_scope() -> dict[str, str]:
    """What the root and :data:`systemd.SLICE` delegate to their children (systemd's own)."""
    return {
        str(level): (level / "cgroup.subtree_control").read_text().strip()
        for level in (cgroups.CGROUP_ROOT, cgroups.CGROUP_ROOT / systemd.SLICE)
    }


class Host:
    """The VM's host as it was before the world started, to compare with after."""

    def __init__(self) -> None:
        self.sysctls = sysctls_before()
        self.failed = _failed_units()
        self.above_scope = _above_scope()

    def changes(self, world: World, network: int) -> list[str]:
        left = host_leftovers(world.state_dir, network, self.sysctls)
        left += [f"unit {u}" for u in _systemctl("list-units", "--all", "--plain",
                                                  "--no-legend", "together-sim*")]  # fmt: skip
        left += [f"failed unit {u}" for u in _failed_units() if u not in self.failed]
        now = _above_scope()
        left += [
            f"{level}/cgroup.subtree_control: {now[level]!r} (was {was!r})"
            for level, was in self.above_scope.items()
            if now[level] != was
        ]
        return left


@pytest.fixture(scope="module")
def host() -> Host:
    assert systemd.manages_cgroups(), "the guest is not a cgroup v2 host with systemd"
    return Host()


@pytest.fixture(scope="module")
def world(host: Host) -> Iterator[World]:
    """A simulator with two real nodes (one standard, one preemptible: each kubelet costs the
    emulated CPUs all along) and its one cluster, Ready. The drill's Job resumes on the
    preemptible node once the drill uncordons it."""
    world = World(kube_bin_or_skip(), images_or_skip(), 1, None, start_timeout=SLOW_START)
    try:
        world.start(lambda line: print(line, file=sys.stderr))
        world.claim(CLAIM, "default")
        yield world
    finally:
        world.close()


GOOD = """
import time
from together_worker import Worker
worker = Worker.from_env()
latest = worker.latest()
count = {"n": int(latest.read_bytes()) if latest else 0}
start = latest.step if latest else 0
total = 400 if latest is None else start + 5
def save(f):
    f.write(str(count["n"]).encode())
for _ in worker.steps(total, start=start, every=5, save=save):
    time.sleep(0.3)
    count["n"] += 1
"""
"""tests/integration/drill/good.py's contract, with a first run long enough for the reclaim
to find it running however slow the kubelet is (under TCG it may act on an eviction tens of
seconds late), and a resumed run of five steps (a whole run again would cost minutes)."""
IGNORES = """
import os, signal, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
mark = os.path.join(os.environ["CHECKPOINT_DIR"], "ran-before")
steps = 4 if os.path.exists(mark) else 600
open(mark, "a").close()
for _ in range(steps):
    time.sleep(0.5)
"""
"""Ignores SIGTERM, and runs until the grace's end kills it however slow the kubelet is; the
Job's next pod ends at once (a whole run again would cost minutes)."""


def _drill(
    world: World, tmp_path: Path, workload: str, grace: str
) -> tuple[int, dict[str, Any], str]:
    config = tmp_path / "kubeconfig"
    config.write_text(world.kubeconfig)
    for left in world.volume_dir.iterdir():  # a drill before this one: start afresh
        subprocess.run(["rm", "-rf", str(left)], check=True)
    report = tmp_path / "report.json"
    done = subprocess.run(
        [sys.executable, "-m", "together_drill", "--kubeconfig", str(config),
         "--volume-dir", str(world.volume_dir), "--json", str(report), "--at", "4",
         "--start-timeout", str(SLOW_START), "--image", PYTHON, "--grace-seconds", grace,
         "--command", "python3", "-u", "-c", workload],
        capture_output=True, text=True, cwd=ROOT, timeout=2 * SLOW_START,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stdout + done.stderr
    return done.returncode, json.loads(report.read_text()), done.stdout + done.stderr


def test_the_drill_says_safe_for_a_workload_that_keeps_the_contract(
    world: World, tmp_path: Path
) -> None:
    code, report, text = _drill(world, tmp_path, GOOD, GRACE["good"])
    assert (code, report["verdict"], report["problems"]) == (0, "safe", []), text
    (reclaim,) = report["reclaims"]
    (pod,) = reclaim["pods"]
    assert pod["sigterm_delivered"] and pod["exit_code"] == 143 and not pod["forced_kill"]
    assert pod["checkpoint_written"] and pod["resumed"] and report["completed"], text


def test_the_drill_says_unsafe_for_a_workload_that_ignores_sigterm(
    world: World, tmp_path: Path
) -> None:
    code, report, text = _drill(world, tmp_path, IGNORES, GRACE["ignores"])
    assert (code, report["verdict"]) == (1, "unsafe"), text
    assert {p["code"] for p in report["problems"]} == {"SIGTERM_IGNORED"}, text
    (reclaim,) = report["reclaims"]
    (pod,) = reclaim["pods"]
    assert pod["forced_kill"] and pod["exit_code"] == 137
    assert pod["sigterm_to_exit_seconds"] >= float(GRACE["ignores"])  # not before grace's end


ON_SIGTERM = """
import signal, sys, time
def on_term(*_):
    open("/data/reclaimed.log", "a").write(f"sigterm {time.time()}\\n")
    sys.exit(143)
signal.signal(signal.SIGTERM, on_term)
open("/data/reclaimed.log", "a").write(f"started {time.time()}\\n")
while True:
    time.sleep(0.1)
"""


def test_a_pod_on_a_node_together_reclaims_gets_sigterm(world: World) -> None:
    node = world.ready_real_nodes()[0]
    log = world.volume_dir / "reclaimed.log"
    log.unlink(missing_ok=True)
    watch = PodWatch(world.kube, "default")
    try:
        world.kube.request("POST", "/api/v1/namespaces/default/pods", {
            "metadata": {"name": "reclaimed"},
            "spec": {
                "nodeName": node, "restartPolicy": "Never", "terminationGracePeriodSeconds": 300,
                "containers": [{"name": "main", "image": PYTHON, "imagePullPolicy": "Never",
                                "command": ["python3", "-u", "-c", ON_SIGTERM],
                                "volumeMounts": [{"name": "data", "mountPath": "/data"}]}],
                "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": CLAIM}}],
            },
        })  # fmt: skip
        wait_for(lambda: log.is_file(), "the pod to start", timeout=SLOW_START)
        world.reclaim(node, ["reclaimed"], "default", lambda line: None)
        ended = wait_for(
            lambda: next((p for _, p in watch.history("reclaimed") if terminated(p)), None),
            "the reclaimed pod to end",
            timeout=SLOW_START,  # beyond its grace: the handler's 143, else the kill's 137
        )
    finally:
        assert watch.stop(), "the pod watch did not end"
    assert "sigterm" in log.read_text().split()
    stopped = terminated(ended)
    assert stopped is not None and stopped["exitCode"] == 143  # its handler, not a kill


def test_after_a_sigkill_cleanup_leaves_the_host_as_before(world: World, host: Host) -> None:
    """Last: the world's simulator is killed (CI's timeout would do it), its nodes' processes
    and scope outlive it, and ``python -m together_sim cleanup`` removes every trace."""
    network = json.loads((world.state_dir / "kube" / RECORD_FILE).read_text())["network"]
    scope = systemd.scope_unit(network)
    pid = world.simulator_pid
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: processes.zombie(pid), "the killed simulator to end", timeout=30)
    # Not reaped yet (its parent is this test's World): a zombie's journal is an orphan's.
    assert _systemctl("show", "--property=ActiveState", "--value", scope) == ["active"]
    done = subprocess.run(
        [sys.executable, "-m", "together_sim", "cleanup"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"removed systemd scope {scope}" in done.stdout, done.stdout
    assert host.changes(world, network) == []
    os.waitpid(pid, 0)
