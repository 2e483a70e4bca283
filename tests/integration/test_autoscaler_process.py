"""`python -m together_autoscaler` as a process: a clean exit within 10 s of SIGTERM, the API key
never in its log, a clear exit on a bad cluster id. Together is the simulator over HTTP; the API
server is unreachable here (its calls fail and are logged), which is what a controller must
survive anyway. The full job on a real control plane is tests/integration/test_autoscaler.py."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from testkit.sim import SimulatorProcess
from tests.specs import CLUSTER_SPEC
from together_api.client import TogetherClient
from together_api.wire import ClusterCreateRequest

KEY = "sk-autoscaler-secret-8d2f61"
pytestmark = pytest.mark.parametrize("simulator", [{"api_key": KEY, "time_scale": 0}],
                                     indirect=True)  # fmt: skip

UNREACHABLE_KUBECONFIG = """apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:9", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: not-a-real-token}}]
contexts: [{name: c, context: {cluster: c, user: u, namespace: default}}]
current-context: c
"""


def _start(sim: SimulatorProcess, tmp_path: Path, cluster_id: str) -> subprocess.Popen[str]:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(UNREACHABLE_KUBECONFIG)
    env = {**os.environ, "TOGETHER_API_KEY": KEY, "TOGETHER_BASE_URL": sim.root_url}
    command = [
        sys.executable, "-m", "together_autoscaler", "--cluster-id", cluster_id,
        "--kubeconfig", str(kubeconfig), "--min-preemptible-gpus", "0",
        "--max-preemptible-gpus", "24", "--scan-interval-seconds", "0.2", "--metrics-port", "0",
    ]  # fmt: skip
    return subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True)


def _cluster(sim: SimulatorProcess) -> str:
    with TogetherClient(api_key=KEY, base_url=sim.base_url) as client:
        return client.create_cluster(
            ClusterCreateRequest(**CLUSTER_SPEC, cluster_name="burst", billing_type="ON_DEMAND")
        ).cluster_id


def _read_until(process: subprocess.Popen[str], needle: str, timeout: float = 60.0) -> str:
    assert process.stderr is not None
    seen = ""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = process.stderr.readline()
        seen += line
        if needle in line:
            return seen
        if not line and process.poll() is not None:
            break
    raise AssertionError(f"no {needle!r} in the controller's log:\n{seen}")


def test_sigterm_ends_it_cleanly_within_10_s_and_the_key_is_never_logged(
    simulator: SimulatorProcess, tmp_path: Path
) -> None:
    process = _start(simulator, tmp_path, _cluster(simulator))
    try:
        log = _read_until(process, "lease failed")  # a scan ran (and the API server was away)
        sent = time.monotonic()
        process.send_signal(signal.SIGTERM)
        _, rest = process.communicate(timeout=10)
        assert process.returncode == 0 and time.monotonic() - sent < 10
    finally:
        process.kill()
    log += rest
    assert "stopped" in log
    assert KEY not in log


def test_a_cluster_that_does_not_exist_is_a_clear_exit(
    simulator: SimulatorProcess, tmp_path: Path
) -> None:
    process = _start(simulator, tmp_path, "no-such-cluster")
    _, log = process.communicate(timeout=60)
    assert process.returncode == 1
    assert "cannot start: NotFoundError" in log and "no-such-cluster" in log
    assert KEY not in log
