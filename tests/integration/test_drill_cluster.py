"""The drill on a cluster it did not start (`--kubeconfig`: the simulator's own control plane),
with another workload's pod on the node it drains; and a drill killed with SIGKILL, whose local
world goes with it."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from testkit.realnodes import host_leftovers, real_nodes_or_skip, sysctls_before
from testkit.wait import wait_for
from together_drill.kube import Obj
from together_drill.world import World
from together_sim.nodes.pool import RECORD_FILE

ROOT = Path(__file__).resolve().parents[2]
GOOD = (Path(__file__).parent / "drill" / "good.py").read_text()
PYTHON = "localhost/together-python:3.11"
GRACE = "6"
GONE_WITHIN_SECONDS = 60


def _bystander(node: str) -> Obj:
    """Another workload's pod on the node the drill will drain: it must keep running."""
    return {
        "metadata": {"name": "bystander"},
        "spec": {
            "nodeName": node,
            "terminationGracePeriodSeconds": 1,
            "containers": [
                {
                    "name": "sleep",
                    "image": PYTHON,
                    "imagePullPolicy": "Never",
                    "command": ["python3", "-c", "import time; time.sleep(3600)"],
                }
            ],
        },
    }


def _drill_cmd(config: Path, volume: Path, report: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "together_drill", "--kubeconfig", str(config),
            "--volume-dir", str(volume), "--json", str(report), *extra,
            "--image", PYTHON, "--grace-seconds", GRACE,
            "--command", "python3", "-u", "-c", GOOD]  # fmt: skip


def _as_found(world: World, bystander_uid: str) -> list[str]:
    """What differs from the cluster as the drill found it (empty: nothing)."""
    kube = world.kube
    wrong = [
        f"node {n['metadata']['name']} unschedulable"
        for n in kube.items("/api/v1/nodes")
        if n["spec"].get("unschedulable")
    ]
    if kube.http.get("/apis/batch/v1/namespaces/default/jobs/drill").status_code != 404:
        wrong.append("Job drill still there")
    pod = kube.request("GET", "/api/v1/namespaces/default/pods/bystander")
    status = pod["status"]["containerStatuses"][0]
    if pod["metadata"]["uid"] != bystander_uid or "running" not in status["state"]:
        wrong.append(f"bystander not the same running pod: {status}")
    if status["restartCount"]:
        wrong.append("bystander restarted")
    return wrong


def test_the_drill_on_an_existing_cluster_touches_only_its_own_pods(
    kube_bin: Path, tmp_path: Path
) -> None:
    """One preemptible node holds the Job's pod and a bystander. The drill cordons it, evicts
    only the Job's pod, uncordons it and deletes its Job: after a clean end and after SIGINT
    mid-drill, every node is schedulable, the Job gone, the bystander the same running pod."""
    images = real_nodes_or_skip(kube_bin)
    world = World(kube_bin, images, 1, None)
    try:
        world.start(lambda line: None)
        kube = world.kube
        config = tmp_path / "kubeconfig"
        config.write_text(world.kubeconfig)
        world.claim("drill-checkpoints", "default")
        (node,) = world.ready_real_nodes()
        kube.request("POST", "/api/v1/namespaces/default/pods", _bystander(node))

        def bystander_running() -> str | None:
            pod = kube.request("GET", "/api/v1/namespaces/default/pods/bystander")
            statuses = pod["status"].get("containerStatuses") or [{}]
            return (
                str(pod["metadata"]["uid"]) if "running" in statuses[0].get("state", {}) else None
            )

        uid = wait_for(bystander_running, "the bystander to run", timeout=120)
        env = {**os.environ, "TOGETHER_KUBE_BIN": str(kube_bin)}

        report = tmp_path / "clean.json"
        done = subprocess.run(
            _drill_cmd(config, world.volume_dir, report, "--at", "4"),
            capture_output=True, text=True, cwd=ROOT, env=env, timeout=600,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        result: dict[str, Any] = json.loads(report.read_text())
        assert result["verdict"] == "safe"
        (reclaim,) = result["reclaims"]
        assert reclaim["node"] == node and [p["exit_code"] for p in reclaim["pods"]] == [143]
        assert f"reclaim 1: node {node}" in done.stderr
        assert f"refill: node {node} uncordoned" in done.stderr
        assert "cleaning up: node" not in done.stderr  # nothing left cordoned at the end
        assert _as_found(world, uid) == []

        for left in world.volume_dir.iterdir():  # the first drill's checkpoints: start afresh
            shutil.rmtree(left) if left.is_dir() else left.unlink()
        # Ctrl-C reaches it as in a terminal: a test run in a background job (`make test &`)
        # starts with SIGINT ignored, which a child keeps (and Python then installs no handler).
        interrupted = subprocess.Popen(
            _drill_cmd(config, world.volume_dir, tmp_path / "cut.json", "--at", "4"),
            stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )  # fmt: skip
        assert interrupted.stderr is not None
        seen = []
        for line in interrupted.stderr:
            seen.append(line)
            if "reclaim 1: node" in line:
                break  # the node is cordoned and the Job's pod evicted: Ctrl-C now
        else:
            pytest.fail(f"the drill ended before its reclaim: {''.join(seen)}")
        interrupted.send_signal(signal.SIGINT)
        rest = interrupted.stderr.read()
        assert interrupted.wait(timeout=120) == 2, rest
        assert "interrupted; leaving the cluster as found" in rest
        assert f"cleaning up: node {node} uncordoned" in rest
        assert _as_found(world, uid) == []
    finally:
        world.close()


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        if parent == pid:
            found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _cmdline(pid: int) -> list[str]:
    return (Path("/proc") / str(pid) / "cmdline").read_bytes().decode().split("\0")


def test_a_drill_killed_with_sigkill_leaves_nothing_behind(kube_bin: Path, tmp_path: Path) -> None:
    """SIGKILL while the drill waits (a CI step's timeout): its simulator notices its parent is
    gone and stops, removing its real nodes; within 60 s no process, node or bridge is left."""
    images = real_nodes_or_skip(kube_bin)
    sysctls = sysctls_before()
    drill = subprocess.Popen(
        [sys.executable, "-m", "together_drill", "--image", PYTHON, "--grace-seconds", GRACE,
         "--at", "300", "--command", "python3", "-c", "import time; time.sleep(600)"],
        stderr=subprocess.PIPE, text=True, cwd=ROOT,
        env={**os.environ, "TOGETHER_KUBE_BIN": str(kube_bin), "TOGETHER_IMAGES_DIR": str(images)},
    )  # fmt: skip
    assert drill.stderr is not None
    seen = []
    for line in drill.stderr:
        seen.append(line)
        if "waiting for a pod to run" in line:
            break
    else:
        pytest.fail(f"the drill ended before its Job was created: {''.join(seen)}")
    (simulator,) = [p for p in _children(drill.pid) if "together_sim" in _cmdline(p)]
    args = _cmdline(simulator)
    state_dir = Path(args[args.index("--state-dir") + 1])
    network = json.loads((state_dir / "kube" / RECORD_FILE).read_text())["network"]
    drill.kill()
    drill.wait()

    def left() -> list[str]:
        return host_leftovers(state_dir, network, sysctls)

    try:
        wait_for(lambda: not left(), "the killed drill's world to go", timeout=GONE_WITHIN_SECONDS)
    finally:
        drill.stderr.close()
    assert not _alive(simulator)  # the drill's orphan, reaped or a zombie: it ran to its end
