"""What `python -m together_sim --kubernetes` costs per simulated cluster: start time, memory, CPU.

Why: with `--kubernetes` every cluster runs its own etcd, API server, controller manager,
scheduler and KWOK (docs/kubernetes-sim.md), on a machine whose 2 cores and 24 GB the whole test
suite shares. Issue 19 wants the per-cluster price on record, beside the simulator without the
flag measured in the same run so the ratios hold up under the machine's load.

Each run is a fresh simulator at the demo's time scale (60: provisioning's 360 simulated seconds
take 6 real ones) creating N clusters at once, each with two standard and two preemptible nodes:
- *create -> Ready*: real seconds from the create call until `GET cluster` says Ready;
- *create -> /readyz*: real seconds until the cluster's API server answers `/readyz` through its
  `kube_config` (the control plane starts once the data plane is up, part-way through
  provisioning); *start* is the simulator's own `start_seconds` (first process spawned until the
  API server is ready and the rest are spawned);
- then, once all four nodes are up (and Ready in Kubernetes), after `settle_s` of idling: CPU
  over `cpu_window_s` (utime + stime from /proc/<pid>/stat) and RSS (VmRSS from
  /proc/<pid>/status), summed over each cluster's processes (`pids` of `GET /_sim/kubernetes`),
  and the simulator's own;
- *stop*: real seconds from the simulator's SIGTERM until it has exited, having stopped every
  control plane (docs/simulator.md#stopping-it-and-what-stays-on-disk).
Polling is every 50 ms, so the times are good to about that.
"""

from __future__ import annotations

import functools
import os
import statistics
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

import httpx

from bench.harness import API_KEY, BASE, REPO, timed
from testkit.kube import KubeClient
from testkit.sim import SimulatorProcess
from together_api.client import TogetherClient
from together_api.wire import ClusterCreateRequest

TIME_SCALE: Final = 60.0
SIZES: Final = (1, 3)
SPEC: Final[dict[str, Any]] = {
    **BASE,
    "num_gpus": 16,
    "num_preemptible_gpus": 16,
    "billing_type": "ON_DEMAND",
}
NODES: Final = 4  # 16 standard + 16 preemptible GPUs, 8 a node
POLL_S: Final = 0.05
TIMEOUT_S: Final = 180.0
KUBE_SCRIPT: Final = REPO / "tools" / "kube" / "build.sh"
_TICKS: Final = os.sysconf("SC_CLK_TCK")


def kube_bin() -> Path | None:
    """The control plane's binaries: $TOGETHER_KUBE_BIN (as `make bench` sets it), else the
    build script's cache; None when neither holds them (the section is then skipped)."""
    configured = os.environ.get("TOGETHER_KUBE_BIN")
    if configured:
        path = Path(configured)
    else:
        where = subprocess.run(
            ["bash", str(KUBE_SCRIPT), "--where"], check=True, capture_output=True, text=True
        )
        path = Path(where.stdout.strip())
    return path if (path / "kube-apiserver").exists() else None


def rss_kib(pid: int) -> int:
    """Resident memory of one process (VmRSS, KiB); 0 once it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of one process so far; 0 once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / _TICKS  # utime, stime (fields 14, 15)


def _readyz(kube: KubeClient) -> bool:
    try:
        return kube.http.get("/readyz").status_code == 200
    except httpx.HTTPError:
        return False


def _nodes_up(kube: KubeClient | None, client: TogetherClient, cluster_id: str) -> bool:
    """All nodes Ready on the Together side, and (with Kubernetes) Ready Nodes too."""
    nodes = client.get_cluster(cluster_id).gpu_worker_nodes
    if sum(1 for n in nodes if n.status == "Ready") < NODES:
        return False
    if kube is None:
        return True
    ready = 0
    for node in kube.nodes():
        conditions = node["status"].get("conditions", [])
        ready += any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)
    return ready >= NODES


def _until(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + TIMEOUT_S
    while not check():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out after {TIMEOUT_S:.0f} s waiting for {what}")
        time.sleep(POLL_S)


def _run(
    root: Path, bin_dir: Path | None, n: int, settle_s: float, window_s: float
) -> dict[str, Any]:
    """One fresh simulator creating `n` clusters together; with Kubernetes when `bin_dir`."""
    mode = "kubernetes" if bin_dir else "baseline"
    sim = SimulatorProcess(
        root / f"sim-{mode}-{n}",
        time_scale=TIME_SCALE,
        api_key=API_KEY,
        kubernetes=bin_dir is not None,
        kube_bin=bin_dir,
    )
    with sim, TogetherClient(api_key=sim.api_key, base_url=sim.base_url) as client:
        created: dict[str, float] = {}
        kubes: dict[str, KubeClient] = {}
        for i in range(n):
            began = time.perf_counter()
            cluster = client.create_cluster(ClusterCreateRequest(**SPEC, cluster_name=f"b{i}"))
            created[cluster.cluster_id] = began
            if bin_dir is not None:
                kubes[cluster.cluster_id] = KubeClient.from_cluster(cluster)
        ready: dict[str, float] = {}
        readyz: dict[str, float] = {}
        try:
            deadline = time.monotonic() + TIMEOUT_S
            while len(ready) < n or len(readyz) < len(kubes):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{mode} N={n}: not all clusters up: {ready}, {readyz}")
                now = time.perf_counter()
                for cid in created.keys() - ready.keys():
                    if client.get_cluster(cid).is_ready:
                        ready[cid] = now - created[cid]
                for cid in kubes.keys() - readyz.keys():
                    if _readyz(kubes[cid]):
                        readyz[cid] = now - created[cid]
                time.sleep(POLL_S)
            for cid in created:
                up = functools.partial(_nodes_up, kubes.get(cid), client, cid)
                _until(up, f"{NODES} nodes of {cid}")
            status = sim.kubernetes_status() if kubes else {}
            pids = {cid: status[cid]["pids"] for cid in status}
            time.sleep(settle_s)  # a benchmark, not a test: let start-up garbage settle
            sim_pid = sim.pid
            every = [sim_pid, *(pid for plane in pids.values() for pid in plane.values())]
            before = {pid: cpu_seconds(pid) for pid in every}
            window = timed(lambda: time.sleep(window_s))
            cpu = {pid: (cpu_seconds(pid) - before[pid]) / window * 100 for pid in every}
            rss = {pid: rss_kib(pid) for pid in every}
        finally:
            for kube in kubes.values():
                kube.close()
        # SIGTERM until the simulator has exited, its control planes stopped and gone first.
        stop_s = timed(sim.stop)
    row: dict[str, Any] = {
        "mode": mode,
        "clusters": n,
        "stop_s": round(stop_s, 2),
        "create_to_ready_s": [round(ready[c], 2) for c in created],
        "simulator_rss_mib": round(rss[sim_pid] / 1024, 1),
        "simulator_cpu_pct": round(cpu[sim_pid], 1),
    }
    if kubes:
        row |= {
            "create_to_readyz_s": [round(readyz[c], 2) for c in created],
            "start_s": [round(float(status[c]["start_seconds"]), 2) for c in created],
            "cluster_rss_mib": [
                round(sum(rss[p] for p in pids[c].values()) / 1024, 1) for c in created
            ],
            "cluster_cpu_pct": [round(sum(cpu[p] for p in pids[c].values()), 1) for c in created],
            "by_process_rss_mib": {
                name: round(rss[pid] / 1024, 1) for name, pid in pids[next(iter(created))].items()
            },
        }
    return row


def measure(root: Path, quick: bool) -> dict[str, Any]:
    """Baseline and Kubernetes runs for 1 and 3 clusters, one at a time; skipped without the
    control plane's binaries (`make engine` builds them)."""
    bin_dir = kube_bin()
    if bin_dir is None:
        return {"skipped": f"no kube-apiserver built (run `make engine`; {KUBE_SCRIPT})"}
    settle_s, window_s = (5.0, 5.0) if quick else (15.0, 10.0)
    runs = []
    for n in SIZES:
        for kube in (None, bin_dir):
            runs.append(_run(root / "control-plane", kube, n, settle_s, window_s))
            print(f"  {runs[-1]}", flush=True)
    return {
        "time_scale": TIME_SCALE,
        "nodes_per_cluster": NODES,
        "settle_s": settle_s,
        "cpu_window_s": window_s,
        "runs": runs,
    }


def _median(values: list[float]) -> float:
    return round(statistics.median(values), 2)


def _mean(values: list[float]) -> float:
    return round(statistics.fmean(values), 1)


def markdown(result: dict[str, Any]) -> list[str]:
    """The report section (bench/report.py appends it)."""
    title = "## Kubernetes control plane per simulated cluster (`together_sim --kubernetes`)"
    if "skipped" in result:
        return [title, "", f"Skipped: {result['skipped']}.", ""]
    lines = [
        title,
        "",
        f"A fresh simulator per row at time scale {result['time_scale']:g} (360 simulated "
        f"seconds of provisioning = 6 real ones) creating N clusters at once, each with "
        f"{result['nodes_per_cluster']} nodes (2 standard, 2 preemptible). Times are real "
        "seconds from each create (median over the N clusters); RSS (VmRSS) and CPU (user + "
        f"system over {result['cpu_window_s']:g} s, % of one core) are read after all nodes "
        f"are up and {result['settle_s']:g} s of idling, and summed over each cluster's "
        "processes (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok); "
        "per cluster = mean over the N clusters. The baseline row is the simulator without "
        "`--kubernetes`, same run, same clusters. Stop is SIGTERM until the simulator has "
        "exited, its control planes gone.",
        "",
        "| Simulator | N | create -> Ready (s) | create -> /readyz (s) | start (s) | "
        "RSS per cluster (MiB) | simulator RSS (MiB) | total RSS (MiB) | "
        "idle CPU per cluster (%) | simulator idle CPU (%) | stop (s) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for run in result["runs"]:
        kube = run["mode"] == "kubernetes"
        total = run["simulator_rss_mib"] + sum(run.get("cluster_rss_mib", []))
        cells = [
            "--kubernetes" if kube else "baseline",
            run["clusters"],
            _median(run["create_to_ready_s"]),
            _median(run["create_to_readyz_s"]) if kube else "-",
            _median(run["start_s"]) if kube else "-",
            _mean(run["cluster_rss_mib"]) if kube else "-",
            run["simulator_rss_mib"],
            round(total, 1),
            _mean(run["cluster_cpu_pct"]) if kube else "-",
            run["simulator_cpu_pct"],
            run.get("stop_s", "-"),
        ]
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    lines += ["", *_reading(result["runs"])]
    return lines


def _gap(run: dict[str, Any]) -> str:
    """How long after Ready the API server answered, at worst over the run's clusters."""
    pairs = zip(run["create_to_readyz_s"], run["create_to_ready_s"], strict=True)
    worst = max(readyz - ready for readyz, ready in pairs)
    if worst <= 0:
        return f"before Ready (at least {-worst:.2f} s before)"
    return f"up to {worst:.2f} s after Ready"


def _reading(runs: list[dict[str, Any]]) -> list[str]:
    """The per-cluster price against the baseline, in words."""
    by = {(r["mode"], r["clusters"]): r for r in runs}
    one, three = by[("kubernetes", 1)], by[("kubernetes", 3)]
    base1, base3 = by[("baseline", 1)], by[("baseline", 3)]

    def total(run: dict[str, Any]) -> float:
        return float(run["simulator_rss_mib"] + sum(run.get("cluster_rss_mib", [])))

    extra1, extra3 = total(one) - total(base1), total(three) - total(base3)
    processes = ", ".join(f"{name} {mib}" for name, mib in one["by_process_rss_mib"].items())
    return [
        f"Reading it: one cluster's control plane adds {extra1:.0f} MiB over the whole baseline "
        f"simulator ({total(one) / total(base1):.1f}x its {total(base1):.0f} MiB); three add "
        f"{extra3:.0f} MiB ({extra3 / 3:.0f} MiB a cluster, {total(three) / total(base3):.1f}x). "
        f"By process, for N=1 (MiB): {processes}. Idle, each control plane uses "
        f"{_mean(one['cluster_cpu_pct'])}% of a core alone and "
        f"{_mean(three['cluster_cpu_pct'])}% with three.",
        "",
        f"Start: the API server answers {_median(one['create_to_readyz_s'])} s after the create "
        f"alone and {_median(three['create_to_readyz_s'])} s with three started together "
        f"(the simulator's start_seconds: {_median(one['start_s'])} s vs "
        f"{_median(three['start_s'])} s); the cluster is Ready after "
        f"{_median(one['create_to_ready_s'])} s (baseline {_median(base1['create_to_ready_s'])}"
        f" s). Its `kube_config` answers {_gap(one)} alone and {_gap(three)} with three (the "
        "simulator reports Ready only once the control plane serves the cluster's nodes, so "
        "Ready moves later when control planes start slowly, never before `/readyz`).",
        "",
    ]
