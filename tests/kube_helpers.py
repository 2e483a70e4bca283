"""Helpers for tests that drive workloads on the simulator's real Kubernetes control plane.

`testkit.kube.KubeClient` talks to a cluster's API server (no kubectl, so a poll costs a
request, not a process). `PodRecorder` watches every pod and keeps each state it went
through, stamped with the simulator's clock, so a test can ask afterwards how long a pod ran in
simulated time and how it ended, even for pods already deleted. Time moves only through the
simulator's clock (`advance`): `testkit.wait.wait_for(each=...)` advances it a step per poll,
`up_advancing` while `pulumi up` runs. Nothing sleeps for simulated time; the short real pauses
are poll intervals of the controllers, which run in real time.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import httpx

from testkit.kube import KubeClient, kube_bin_or_skip
from testkit.pulumi_env import k8s_plugin_bin
from testkit.sim import SimulatorProcess
from testkit.wait import wait_for
from tests.clusters import live_clusters
from together_api.kubeconfig import decode_kube_config
from together_facts.values import COMPUTE_CLASS_LABEL
from together_sim.plane.pods import STARTED_AT

INDEX_ANNOTATION = "batch.kubernetes.io/job-completion-index"
RUN_SECONDS_ANNOTATION = "together-sim/run-seconds"
POLL = 0.2
"""Real seconds between polls of the API server (the controllers run in real time)."""

T = TypeVar("T")


def gpu_job(
    name: str,
    *,
    run_seconds: int,
    pods: int = 1,
    node_selector: dict[str, str] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    """A Job of `pods` pods that each ask for a whole 8-GPU node, which the simulator runs for
    `run_seconds` of simulated time; `node_selector` says where they may run, `spec` adds Job
    spec fields (``backoffLimit``, a ``podFailurePolicy``)."""
    container = {"name": "w", "image": "example.invalid/w:1",
                 "resources": {"limits": {"nvidia.com/gpu": "8"}}}  # fmt: skip
    pod: dict[str, Any] = {"restartPolicy": "Never", "containers": [container]}
    if node_selector:
        pod["nodeSelector"] = node_selector
    template = {"metadata": {"annotations": {RUN_SECONDS_ANNOTATION: str(run_seconds)}},
                "spec": pod}  # fmt: skip
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"completions": pods, "parallelism": pods, **spec, "template": template},
    }


def surviving_job(name: str, pods: int, run_seconds: int = 36000) -> dict[str, Any]:
    """Preemptible pods whose evictions (a reclaim) the Job ignores: each evicted pod is
    replaced, and the replacement waits for Together's refill."""
    ignore_evictions = {"rules": [
        {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]}  # fmt: skip
    return gpu_job(name, run_seconds=run_seconds, pods=pods,
                   node_selector={COMPUTE_CLASS_LABEL: "preemptible"}, backoffLimit=0,
                   podReplacementPolicy="Failed", podFailurePolicy=ignore_evictions)  # fmt: skip


def assert_checkpointing_job_spec(
    spec: dict[str, Any], *, completions: int, parallelism: int
) -> None:
    """`spec` is a `CheckpointingWorker`'s Job: an indexed array of `completions` pods,
    `parallelism` at a time, whose reclaimed pods are replaced without spending the backoff
    limit (a disruption is ignored; a pod is replaced only once it has failed)."""
    assert spec["completionMode"] == "Indexed"
    assert (spec["completions"], spec["parallelism"], spec["backoffLimit"]) == (
        completions,
        parallelism,
        3,
    )
    assert spec["podFailurePolicy"] == {
        "rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]
    }
    assert spec["podReplacementPolicy"] == "Failed"


def free_port() -> int:
    """A loopback port nothing listens on (free when asked)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cluster_puts(sim: SimulatorProcess) -> list[dict[str, Any]]:
    """The simulator's logged PUTs of a cluster (the autoscaler's target updates)."""
    return [r for r in sim.requests() if r["method"] == "PUT" and "clusters" in r["path"]]


class AutoscalerProcess:
    """One ``python -m together_autoscaler`` against the simulator: its metrics port and log.

    ``flags`` are the CLI's own (``"--min-preemptible-gpus": 0``...); a 0.5 s scan unless given."""

    def __init__(self, sim: SimulatorProcess, key: str, cluster_id: str, kubeconfig: Path,
                 log: Path, **flags: object) -> None:  # fmt: skip
        self.port, self.log = free_port(), log
        env = {**os.environ, "TOGETHER_API_KEY": key, "TOGETHER_BASE_URL": sim.root_url}
        options = {"--min-preemptible-gpus": 0, "--max-preemptible-gpus": 32,
                   "--scan-interval-seconds": 0.5, **flags}  # fmt: skip
        command = [sys.executable, "-m", "together_autoscaler", "--cluster-id", cluster_id,
                   "--kubeconfig", str(kubeconfig), "--metrics-port", str(self.port)]  # fmt: skip
        command += [str(part) for flag, value in options.items() for part in (flag, value)]
        with log.open("w") as out:
            self.process = subprocess.Popen(command, env=env, stderr=out)

    def metrics(self) -> str:
        try:
            return httpx.get(f"http://127.0.0.1:{self.port}/metrics", timeout=5).text
        except httpx.HTTPError:
            return ""

    def metric(self, name: str) -> float | None:
        for line in self.metrics().splitlines():
            if line.startswith(f"{name} "):
                return float(line.split()[1])
        return None

    def decisions(self) -> float:
        """Decisions made so far (one per scan while leading)."""
        return sum(float(line.split()[-1]) for line in self.metrics().splitlines()
                   if line.startswith("together_autoscaler_decisions_total{"))  # fmt: skip

    def scanned(self, scans: int = 2) -> None:
        """Wait (real time) until ``scans`` more decisions: it has looked at what is there now."""
        seen = self.decisions()
        wait_for(lambda: self.decisions() >= seen + scans, f"{scans} autoscaler scans")

    def stop(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=10)


def started_pods(api: KubeClient, selector: str = "") -> list[dict[str, Any]]:
    """Running pods (matching ``selector``) the simulator's pod clock has stamped
    (``STARTED_AT``): only once stamped does a clock advance count toward their run time, so a
    test waits for the stamps before advancing (advancing first made a loaded run wait another
    full run)."""
    return [p for p in api.pods(selector) if p["status"].get("phase") == "Running"
            and STARTED_AT in (p["metadata"].get("annotations") or {})]  # fmt: skip


def node_classes(api: KubeClient) -> dict[str, str]:
    """Node name -> its compute class (`standard` when the label is absent)."""
    return {
        node["metadata"]["name"]: node["metadata"]["labels"].get(COMPUTE_CLASS_LABEL, "standard")
        for node in api.nodes()
    }


@dataclass
class PodState:
    """One observed state of a pod, at a simulated time: the simulator's clock when the watch
    event was handled, so never before the state began, but later when the recorder lags (a
    loaded machine, while the test advances the clock)."""

    sim_time: float
    phase: str
    node: str | None
    conditions: frozenset[str]
    deleting: bool
    exit_code: int | None
    started_at: float | None = None
    """The pod's `together-sim/started-at`: exact, whatever the recorder's lag."""


@dataclass
class PodHistory:
    """Every state a pod was seen in, first to last."""

    name: str
    labels: dict[str, str]
    index: str | None
    states: list[PodState] = field(default_factory=list)

    @property
    def final(self) -> PodState:
        return self.states[-1]

    @property
    def node(self) -> str | None:
        return next((s.node for s in reversed(self.states) if s.node), None)

    def first_seen(self, phase: str) -> PodState | None:
        return next((s for s in self.states if s.phase == phase), None)

    @property
    def started_at(self) -> float | None:
        """When the simulator started the pod's work (simulated), or None before it did."""
        return next((s.started_at for s in self.states if s.started_at is not None), None)

    def ran_for(self) -> float | None:
        """Simulated seconds from the start of the pod's work to first seen in a terminal phase.

        The start is the simulator's own stamp on the pod, not when the recorder saw it Running:
        a recorder that lags behind a clock advance would stamp the start late and make a full
        run look short. The end can only be seen late, which errs towards longer."""
        end = next((s for s in self.states if s.phase in ("Succeeded", "Failed")), None)
        started = self.started_at
        return None if started is None or end is None else end.sim_time - started


class PodRecorder:
    """Watches the pods of a namespace in a thread and keeps each one's history (by uid).

    Re-listing on a reconnect replays ADDED events; a state equal to the last one is not
    recorded twice, so a history holds transitions only."""

    def __init__(self, api: KubeClient, sim: SimulatorProcess, namespace: str = "default") -> None:
        self._api, self._sim, self._namespace = api, sim, namespace
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._pods: dict[str, PodHistory] = {}
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> PodRecorder:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()

    def _run(self) -> None:
        path = f"/api/v1/namespaces/{self._namespace}/pods"
        while not self._stop.is_set():
            try:
                for event in self._api.watch(path, self._stop):
                    if event["type"] in ("ADDED", "MODIFIED", "DELETED"):
                        self._record(event["object"])
            except httpx.HTTPError:  # the server ended the watch: watch again
                time.sleep(POLL)
            except BaseException as error:  # reported by histories(), not lost in the thread
                self._error = error
                return

    def _record(self, pod: dict[str, Any]) -> None:
        meta, status = pod["metadata"], pod.get("status", {})
        started_at = (meta.get("annotations") or {}).get(STARTED_AT)
        terminated = [
            c.get("state", {}).get("terminated") for c in status.get("containerStatuses", [])
        ]
        state = PodState(
            sim_time=sim_clock(self._sim),
            phase=status.get("phase", ""),
            node=pod["spec"].get("nodeName"),
            conditions=frozenset(
                c["type"] for c in status.get("conditions", []) if c.get("status") == "True"
            ),
            deleting="deletionTimestamp" in meta,
            exit_code=next((t["exitCode"] for t in terminated if t), None),
            started_at=float(started_at) if started_at is not None else None,
        )
        with self._lock:
            history = self._pods.setdefault(
                meta["uid"],
                PodHistory(
                    name=meta["name"],
                    labels=meta.get("labels", {}),
                    index=meta.get("annotations", {}).get(INDEX_ANNOTATION),
                ),
            )
            if not history.states or history.states[-1] != state:
                history.states.append(state)

    def histories(
        self, selector: Callable[[PodHistory], bool] = lambda _: True
    ) -> list[PodHistory]:
        if self._error is not None:
            raise AssertionError(f"the pod watch failed: {self._error!r}")
        with self._lock:
            return [h for h in self._pods.values() if selector(h)]


def advancing(
    operation: Callable[[], T],
    sim: SimulatorProcess,
    step: float,
    on_tick: Callable[[], object] = lambda: None,
) -> T:
    """Run `operation` (say `stack.up`) while advancing the simulator's clock `step` seconds
    every poll, so provisioning, the preemptible fill and grace periods pass without waiting
    real minutes; `on_tick` runs after each advance."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        future = pool.submit(operation)
        while not future.done():
            sim.advance(step)
            on_tick()
            time.sleep(POLL)
        return future.result()


def cluster_api(sim: SimulatorProcess) -> KubeClient | None:
    """A client for the API server of the simulator's one live cluster, once it answers."""
    clusters = [c for c in live_clusters(sim) if c.kube_config]
    if len(clusters) != 1:
        return None
    api = KubeClient(decode_kube_config(clusters[0].kube_config))
    try:
        api.get("/api/v1/namespaces/default")
    except httpx.HTTPError:
        api.close()
        return None
    return api


def sim_clock(sim: SimulatorProcess) -> float:
    """The simulator's virtual time (epoch seconds)."""
    epoch: float = httpx.get(f"{sim.root_url}/_sim/clock", timeout=10.0).json()["epoch"]
    return epoch


def reclaim(sim: SimulatorProcess, cluster_id: str, node_ids: list[str]) -> list[str]:
    """Reclaim the named preemptible nodes now; returns the node ids that start draining."""
    response = httpx.post(
        f"{sim.root_url}/_sim/clusters/{cluster_id}/reclaim",
        json={"nodes": len(node_ids), "node_ids": node_ids},
        timeout=10.0,
    )
    response.raise_for_status()
    reclaimed: list[str] = response.json()["reclaimed"]
    return reclaimed


def demo_bins_env() -> dict[str, str]:
    """What `make demo` passes scripts/demo.sh besides the engine: the plugin's and kube's dirs."""
    return {
        "TOGETHER_K8S_PROVIDER_BIN": str(k8s_plugin_bin()),
        "TOGETHER_KUBE_BIN": str(kube_bin_or_skip()),
    }
