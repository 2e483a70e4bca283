"""What the preemptible autoscaler costs and how it behaves (issue 26, §6): in process, exact
where it can be.

- *scan time at 500 pending pods on 100 nodes*: reading 500 Unschedulable pods and 100 busy
  preemptible nodes from lightkube objects (what `KubeSide.observe` does after its three list
  calls) plus `decide()`, median of repeats; and `decide()` alone on the same observation.
  Goal: under 100 ms.
- *PUTs per burst*: a burst of 3, 5 and 12 eight-GPU pods played scan by scan through `decide()`
  against a model of Together that adds one node per scan (its fill), then the pods ending.
  Goal: 1 PUT up, at most 1 per node down.
- *Unschedulable -> PUT*: the scan from a pending pod's first sight to the PUT sent, with
  Together over a mock transport: the latency on top of waiting for the next scan, so the bound
  is ``scan interval + this``.
- *RSS and CPU*: a fresh interpreter that loads what the command loads (idle RSS), then
  builds the 500-pod observation and scans it 50 times (peak RSS, CPU per scan).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from typing import Any

from bench.harness import REPO

GOAL_SCAN_MS = 100.0

_SETUP = """
from lightkube.resources.core_v1 import Node, Pod
from together_autoscaler.decide import decide
from together_autoscaler.model import ClusterState, Limits, Observed
from together_autoscaler.pods import node_state, pending_pod

CONTAINER = {"name": "w", "image": "i", "resources": {"limits": {"nvidia.com/gpu": "8"}}}
PODS = [Pod.from_dict({
    "metadata": {"name": f"p{i}", "namespace": "default", "uid": f"u{i}"},
    "spec": {"nodeSelector": {"together.ai/compute-class": "preemptible"},
             "containers": [CONTAINER]},
    "status": {"phase": "Pending", "conditions": [
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]},
}) for i in range(500)]
NODES = [Node.from_dict({
    "metadata": {"name": f"n{i}", "labels": {"together.ai/compute-class": "preemptible"}},
    "spec": {},
    "status": {"allocatable": {"nvidia.com/gpu": "8"},
               "conditions": [{"type": "Ready", "status": "True"}]},
}) for i in range(100)]
RUNNING = [Pod.from_dict({
    "metadata": {"name": f"r{i}", "namespace": "default", "uid": f"r{i}"},
    "spec": {"nodeName": f"n{i}", "containers": [CONTAINER]},
    "status": {"phase": "Running"},
}) for i in range(100)]
LIMITS = Limits(min_gpus=0, max_gpus=8000)


def scan():
    nodes = tuple(node_state(n, [RUNNING[i]], False) for i, n in enumerate(NODES))
    pending = tuple(p for p in map(pending_pod, PODS) if p is not None)
    return decide(Observed(1000.0, ClusterState(800, 800, 8), LIMITS, nodes, pending))
"""

_RSS_PROBE = (
    """
import json, resource, time
import together_autoscaler.cli, together_autoscaler.controller, together_autoscaler.kube
import together_autoscaler.leader, together_autoscaler.metrics, together_api.client
def rss():
    status = open("/proc/self/status").read()
    return int(next(l for l in status.splitlines() if l.startswith("VmRSS:")).split()[1])
idle = rss()
"""
    + _SETUP
    + """
cpu0 = time.process_time()
for _ in range(50):
    decision = scan()
cpu = (time.process_time() - cpu0) / 50
peak = max(rss(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
print(json.dumps({"idle_rss_mib": round(idle / 1024, 1), "busy_rss_mib": round(peak / 1024, 1),
                  "cpu_ms_per_scan": round(cpu * 1000, 2), "target": decision.target}))
"""
)


def _scan_times(repeats: int) -> dict[str, Any]:
    namespace: dict[str, Any] = {}
    exec(compile(_SETUP, "bench_autoscaler_setup", "exec"), namespace)
    scan = namespace["scan"]
    full, alone = [], []
    decision = scan()
    observed = namespace["Observed"](
        1000.0, namespace["ClusterState"](800, 800, 8), namespace["LIMITS"],
        tuple(namespace["node_state"](n, [namespace["RUNNING"][i]], False)
              for i, n in enumerate(namespace["NODES"])),
        tuple(p for p in map(namespace["pending_pod"], namespace["PODS"]) if p is not None),
    )  # fmt: skip
    for _ in range(repeats):
        start = time.perf_counter()
        scan()
        full.append(time.perf_counter() - start)
        start = time.perf_counter()
        namespace["decide"](observed)
        alone.append(time.perf_counter() - start)
    return {
        "pending_pods": 500,
        "nodes": 100,
        "scan_ms": round(statistics.median(full) * 1000, 2),
        "decide_ms": round(statistics.median(alone) * 1000, 2),
        "target_after": decision.target,
        "goal_ms": GOAL_SCAN_MS,
    }


def _puts_per_burst(pods: int) -> dict[str, int]:
    """Play a burst scan by scan (10 s apart): Together adds one node per scan toward the
    target, the scheduler binds a waiting pod to each new node, the pods run for 3 scans and
    end, and the idle nodes go after a 20 s unneeded window."""
    from together_autoscaler import model
    from together_autoscaler.decide import decide

    limits = model.Limits(min_gpus=0, max_gpus=800, unneeded_seconds=20)
    desired = nodes = bound = ran = up = down = 0
    memory, done = model.Memory(), False
    for scan in range(1, 200):
        busy = 0 if done else min(bound, nodes)
        state = [
            model.NodeState(f"n{i}", 8, used_gpus=8 * (i < busy), workload_pods=int(i < busy))
            for i in range(nodes)
        ]
        waiting = 0 if done else pods - bound
        pending = tuple(model.PendingPod("d", f"p{i}", f"u{i}", 8, True) for i in range(waiting))
        observed = model.Observed(scan * 10.0, model.ClusterState(desired, nodes * 8), limits,
                                  tuple(state), pending, memory)  # fmt: skip
        decision = decide(observed)
        memory = decision.memory
        up += decision.target > desired
        down += decision.target < desired
        nodes -= len(decision.scale_down_nodes)
        desired = decision.target
        if nodes < desired // 8:
            nodes += 1
        if not done:
            bound = min(pods, nodes)
            ran += bound == pods
            done = ran > 3
        if done and desired == 0 and nodes == 0:
            break
    return {"puts_up": up, "puts_down": down}


def _unschedulable_to_put(repeats: int) -> float:
    import httpx

    from together_api.client import TogetherClient
    from together_autoscaler.controller import Controller
    from together_autoscaler.metrics import Metrics
    from together_autoscaler.model import Limits, PendingPod

    cluster = {"cluster_id": "c", "status": "Ready", "gpu_type": "H100_SXM", "num_gpus": 8,
               "desired_preemptible_gpus": 0, "allocated_preemptible_gpus": 0}  # fmt: skip
    stamps: list[float] = []

    def handler(request: httpx.Request) -> httpx.Response:
        if request.method == "PUT":
            stamps.append(time.perf_counter())
        return httpx.Response(200, json=cluster)

    class Kube:
        pending = (PendingPod("d", "p", "u", 8, True),)

        def observe(self) -> Any:
            return (), self.pending

        def workload_pods(self, node: str) -> int:
            return 0

        def mark(self, node: str) -> None: ...
        def unmark(self, node: str) -> None: ...
        def record(self, explanation: Any) -> None: ...

    class Elector:
        def try_acquire_or_renew(self) -> bool:
            return True

        def holds(self) -> bool:
            return True

        def release(self) -> None: ...

    times = []
    with TogetherClient("k", "https://t.test", transport=httpx.MockTransport(handler)) as api:
        for _ in range(repeats):
            loop = Controller(api, Kube(), Elector(), Metrics(), "c", Limits(0, 64))
            start = time.perf_counter()
            loop.tick()
            times.append(stamps[-1] - start)
    return round(statistics.median(times) * 1000, 2)


def measure(quick: bool) -> dict[str, Any]:
    repeats = 5 if quick else 20
    probe = subprocess.run(
        [sys.executable, "-c", _RSS_PROBE], capture_output=True, text=True, check=True, cwd=REPO
    )
    bursts = []
    for size in (3, 5, 12):
        bursts.append({"pods": size, **_puts_per_burst(size)})
    return {
        "scan": _scan_times(repeats),
        "bursts": bursts,
        "unschedulable_to_put_ms": _unschedulable_to_put(repeats),
        "process": json.loads(probe.stdout),
    }


def markdown(result: dict[str, Any]) -> list[str]:
    scan, process = result["scan"], result["process"]
    met = "met" if scan["scan_ms"] < scan["goal_ms"] else "NOT met"
    lines = [
        "## Preemptible autoscaler (`together_autoscaler`)",
        "",
        f"A scan at {scan['pending_pods']} pending 8-GPU pods on {scan['nodes']} busy "
        f"preemptible nodes (reading the pods and nodes from lightkube objects, then `decide()`):"
        f" **{scan['scan_ms']} ms** (goal under {scan['goal_ms']:g} ms: {met}); `decide()` alone "
        f"{scan['decide_ms']} ms. The decision: target 800 -> {scan['target_after']}, in one PUT.",
        "",
        "PUTs per burst (scan by scan through `decide()`, Together adding one node per scan):",
        "",
        "| Pods (8 GPUs each) | PUTs up | PUTs down (goal: at most one per node) |",
        "|---|---|---|",
    ]
    lines += [f"| {b['pods']} | {b['puts_up']} | {b['puts_down']} |" for b in result["bursts"]]
    lines += [
        "",
        f"Unschedulable -> PUT: {result['unschedulable_to_put_ms']} ms from the scan that first "
        "sees the pod to the PUT sent (Together over a mock transport); the wait for that scan "
        "adds up to `--scan-interval-seconds` (10 s by default).",
        "",
        f"The process (what the command loads): {process['idle_rss_mib']} MiB RSS idle, "
        f"{process['busy_rss_mib']} MiB peak after 50 scans of the 500-pod observation, "
        f"{process['cpu_ms_per_scan']} ms CPU per scan.",
        "",
    ]
    return lines
