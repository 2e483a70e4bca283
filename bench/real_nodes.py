"""Real nodes against KWOK nodes in the same run (`--real-nodes`): start to Ready, pod start,
memory per node, and reclaim to SIGTERM.

Why: issue 32 puts a real kubelet and containerd behind some of a cluster's nodes, so a pod's
process gets a real SIGTERM. What that costs beside a KWOK node is measured here, in one simulator
at the demo's time scale (60) with one cluster of one standard and two preemptible nodes and
`--real-nodes 2` (the simulator fills real slots in the order nodes come: the standard node and
the first preemptible one are real, the second preemptible one is a KWOK node):
- *start -> Ready*: real seconds from the first moment the API lists a node (up) until its Node
  is Ready in Kubernetes (for a real node: containerd started, images imported, the kubelet
  registered and reported Ready; for a KWOK node: the simulator created it and KWOK marked it);
  beside it the real node's own `start_seconds` (its first step to its kubelet started) and the
  seconds of each step of that start (the node's status `phases`: certificate, network, images,
  containerd, kubelet to registration);
- *pod start*: a pod created with `nodeName` on each node (its volume claim already bound) until
  its Ready condition, real seconds;
- *memory per node*: a real node's RSS summed over every process in its cgroup (kubelet,
  containerd, the shims and the pods' processes, with the two pods running), VmRSS from
  /proc/<pid>/status; a KWOK node's share is the cluster's KWOK process RSS over its KWOK nodes;
- *reclaim -> SIGTERM*: from the reclaim call until the process wrote the time it got SIGTERM
  (wall clock, on the shared volume), the pods having run 3 s (`SETTLE_S`: a kubelet that synced
  a pod within its last PLEG relist, as it does when the pod starts, waits up to 2 s more before
  it kills; Kubernetes' pod_workers.go says so of every sync-to-terminating transition); for a
  KWOK pod (no process) until its pod showed the exit
  code the simulator writes (the watch, 50 ms polls).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, Final

from bench.control_plane import kube_bin, rss_kib
from bench.harness import BASE
from testkit.kube import KubeClient
from testkit.sim import SimulatorProcess
from together_api.client import TogetherClient
from together_api.wire import ClusterCreateRequest, VolumeCreateRequest
from together_sim.host.cgroups import cgroup_pids
from together_sim.host.images import IMAGES_ENV
from together_sim.nodes.pool import RECORD_FILE, real_nodes_unavailable

TIME_SCALE: Final = 60.0
NODES: Final = 3
POLL_S: Final = 0.05
TIMEOUT_S: Final = 180.0
SETTLE_S: Final = 3.0
"""Seconds between the last pod's Ready and the reclaim (the kubelet's relist wait, below)."""
PYTHON: Final = "localhost/together-python:3.11"
SIGTERM_SCRIPT: Final = """
import os, signal, sys, time
def on_term(*_):
    open(f"/data/{os.environ['POD']}.sigterm", "w").write(repr(time.time()))
    sys.exit(143)
signal.signal(signal.SIGTERM, on_term)
while True:
    time.sleep(0.1)
"""


def _wait(check: Any, what: str) -> Any:
    deadline = time.monotonic() + TIMEOUT_S
    while time.monotonic() < deadline:
        try:
            found = check()
        except Exception:  # not there yet (the API server is starting, the file is not written)
            found = None
        if found:
            return found
        time.sleep(POLL_S)
    raise RuntimeError(f"bench real_nodes: timed out waiting for {what}")


def _ready(node: dict[str, Any]) -> bool:
    conditions = node.get("status", {}).get("conditions", [])
    return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)


def _pod(name: str, node: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "spec": {
            "nodeName": node,
            "restartPolicy": "Never",
            "terminationGracePeriodSeconds": 30,
            "automountServiceAccountToken": False,
            "containers": [{
                "name": "main", "image": PYTHON,
                "command": ["python3", "-u", "-c", SIGTERM_SCRIPT],
                "env": [{"name": "POD", "value": name}],
                "volumeMounts": [{"name": "data", "mountPath": "/data"}],
            }],
            "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}],
        },
    }  # fmt: skip


def real_nodes_here() -> tuple[Path | None, str, str]:
    """The Kubernetes binaries, the images directory and why real nodes cannot run here (empty:
    they can), for every section that runs them."""
    binaries = kube_bin()
    images = os.environ.get(IMAGES_ENV, "")
    why = "" if binaries is not None else "no control plane built (tools/kube/build.sh)"
    why = why or real_nodes_unavailable(binaries)
    if not why and not (Path(images) / "pause.tar").is_file():
        why = f"no images: ${IMAGES_ENV} is {images!r} (tools/images/build.sh)"
    return binaries, images, why


def measure(root: Path, quick: bool = False) -> dict[str, Any]:
    binaries, images, why = real_nodes_here()
    if why:
        print(f"  real_nodes skipped: {why}", flush=True)
        return {"skipped": why}
    assert binaries is not None
    state = root / "real-nodes"
    sim = SimulatorProcess(
        state,
        time_scale=TIME_SCALE,
        kubernetes=True,
        kube_bin=binaries,
        extra_args=("--provisioning-seconds", "60", "--real-nodes", "2", "--images", images),
    )
    with sim, TogetherClient(api_key=sim.api_key, base_url=sim.base_url) as client:
        spec = {**BASE, "num_gpus": 8, "num_preemptible_gpus": 16, "billing_type": "ON_DEMAND"}
        volume = VolumeCreateRequest(volume_name="data", size_tib=1, region=BASE["region"])
        cid = client.create_cluster(
            ClusterCreateRequest(**spec, cluster_name="bench", shared_volume=volume)
        ).cluster_id
        sim.control_plane(cid)
        kube = KubeClient.from_cluster(client.get_cluster(cid))
        listed: dict[str, float] = {}
        ready: dict[str, float] = {}
        kinds: dict[str, str] = {}
        deadline = time.monotonic() + TIMEOUT_S
        while (len(ready) < NODES or len(listed) < NODES) and time.monotonic() < deadline:
            now = time.monotonic()
            for up in client.get_cluster(cid).gpu_worker_nodes:
                if up.status == "Ready":
                    listed.setdefault(up.node_id, now)
            try:
                nodes = kube.nodes()
            except Exception:
                nodes = []
            for node in nodes:
                name = node["metadata"]["name"]
                kinds[name] = "real" if node["metadata"]["labels"].get(
                    "together-sim/kwok") == "false" else "kwok"  # fmt: skip
                if _ready(node) and name in listed:
                    ready.setdefault(name, now)
            time.sleep(POLL_S)
        status = sim.kubernetes_status()[cid]
        claim = {
            "metadata": {"name": "data"},
            "spec": {
                "accessModes": ["ReadWriteMany"], "storageClassName": "", "volumeName": "data",
                "resources": {"requests": {"storage": "1Ti"}},
            },
        }  # fmt: skip
        kube.request("POST", "/api/v1/namespaces/default/persistentvolumeclaims", claim)
        _wait(
            lambda: kube.get("/api/v1/namespaces/default/persistentvolumeclaims/data")["status"]
            .get("phase") == "Bound",
            "the claim to bind",
        )  # fmt: skip
        pod_start: dict[str, float] = {}
        for name in sorted(ready):
            pod = f"p-{name[-5:]}"
            began = time.monotonic()
            kube.request("POST", "/api/v1/namespaces/default/pods", _pod(pod, name))
            _wait(
                lambda pod=pod: _ready(kube.get(f"/api/v1/namespaces/default/pods/{pod}")),
                f"pod {pod} Ready",
            )
            pod_start[name] = time.monotonic() - began
        network = json.loads((state / "kube" / RECORD_FILE).read_text())["network"]
        memory: dict[str, float] = {}
        for name, real in status["real_nodes"].items():
            pids = cgroup_pids(f"together-sim/tsim{network}-n{real['slot']}")
            memory[name] = sum(rss_kib(p) for p in pids) / 1024
        kwok_nodes = [n for n, k in kinds.items() if k == "kwok"]
        kwok_rss = rss_kib(status["pids"]["kwok"]) / 1024
        for name in kwok_nodes:
            memory[name] = kwok_rss / max(1, len(kwok_nodes))
        # Pods in their steady state, as a reclaim finds them: a kubelet that synced a pod less
        # than a PLEG relist (1 s) ago waits for the next relist before it kills it (up to 2 s:
        # pod_workers.go, "this adds ~1s of latency on all transitions from sync to
        # terminating"), and each pod has just been synced, by its start.
        time.sleep(SETTLE_S)
        # Reclaim one real and one KWOK preemptible node at the same moment.
        preemptible = [n for n in ready if n.startswith("gpu-preemptible-dp-")]
        wall, began = time.time(), time.monotonic()
        sim.reclaim(cid, node_ids=preemptible)
        volume_dir = next((state / "kube" / "volumes").iterdir())
        sigterm: dict[str, float] = {}
        for name in preemptible:
            pod = f"p-{name[-5:]}"
            if kinds[name] == "real":
                written = _wait(
                    lambda pod=pod: (volume_dir / f"{pod}.sigterm").read_text(), "the SIGTERM"
                )
                sigterm[name] = float(written) - wall
            else:

                def exited(pod: str = pod) -> bool:
                    got = kube.get(f"/api/v1/namespaces/default/pods/{pod}")
                    states = got["status"].get("containerStatuses", [])
                    return any("terminated" in s.get("state", {}) for s in states)

                _wait(exited, "the KWOK pod's exit")
                sigterm[name] = time.monotonic() - began
        kube.close()
        rows = [
            {
                "node": name,
                "kind": kinds[name],
                "start_to_ready_s": round(ready[name] - listed[name], 2),
                "node_start_s": round(status["real_nodes"][name]["start_seconds"], 2)
                if name in status["real_nodes"]
                else None,
                "phases": status["real_nodes"][name].get("phases")
                if name in status["real_nodes"]
                else None,
                "pod_start_s": round(pod_start[name], 2),
                "memory_mib": round(memory[name], 1),
                "reclaim_to_sigterm_s": round(sigterm[name], 3) if name in sigterm else None,
            }
            for name in sorted(ready)
        ]
    return {"time_scale": TIME_SCALE, "nodes": rows, "quick": quick}


TARGETS: Final = (
    # (row key, what, issue 42's target, the figure before issue 42's speed work, unit)
    ("start_to_ready_s", "start -> Ready", 3.0, 3.93, "s"),
    ("reclaim_to_sigterm_s", "reclaim -> SIGTERM", 0.5, 0.596, "s"),
    ("memory_mib", "memory per node", 200.0, 155.0, "MiB"),
)
"""Issue 42 asks each real-node figure to be at most its target, reported against the figure
before (BENCHMARKS.md's real-node table of the run before the image seed)."""


def against_targets(rows: list[dict[str, Any]]) -> list[str]:
    """The slowest (largest) figure among the real nodes, for each target: met or not, and the
    figure before."""
    real = [r for r in rows if r["kind"] == "real"]
    out = []
    for key, what, target, before, unit in TARGETS:
        figures = [r[key] for r in real if r.get(key) is not None]
        if not figures:
            out.append(f"- {what}: no real node measured")
            continue
        worst = max(figures)
        verdict = "met" if worst <= target else "**not met**"
        out.append(
            f"- {what}, the slowest real node: **{worst} {unit}** (target at most {target} "
            f"{unit}: {verdict}; before: {before} {unit})"
        )
    return out


def _steps(phases: dict[str, float] | None) -> str:
    """A real node's start, step by step (the certificate is made beside the network and the
    images, so the steps add up to more than the start)."""
    return ", ".join(f"{k} {v}" for k, v in phases.items()) if phases else "-"


def markdown(found: dict[str, Any]) -> list[str]:
    out = ["", "## Real nodes against KWOK nodes (`--real-nodes`)", ""]
    if "skipped" in found:
        return [*out, f"Skipped: {found['skipped']}.", ""]
    out += [
        "One cluster, one standard and two preemptible nodes, `--real-nodes 2`, time scale 60 "
        "(bench/real_nodes.py says how each figure is taken).",
        "",
        "| Node | Kind | Start -> Ready (s) | Node start (s) | Pod start (s) | Memory (MiB) "
        "| Reclaim -> SIGTERM (s) | Node start's steps (s) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in found["nodes"]:
        out.append(
            f"| {row['node']} | {row['kind']} | {row['start_to_ready_s']} | "
            f"{row['node_start_s'] if row['node_start_s'] is not None else '-'} | "
            f"{row['pod_start_s']} | {row['memory_mib']} | "
            f"{row['reclaim_to_sigterm_s'] if row['reclaim_to_sigterm_s'] is not None else '-'} | "
            f"{_steps(row.get('phases'))} |"
        )
    return [*out, "", *against_targets(found["nodes"]), ""]
