"""Wall time of `pulumi preview` and a no-op `pulumi up` for N clusters, beside the same commands
on a stack of N do-nothing dynamic resources measured in the same run (so machine load hits both).

Runs alternate (cluster, baseline) per repetition and report the median; the ratio is what the
Cluster provider adds over the engine's own cost for N dynamic resources. Both programs declare
resources only; a third series previews the same clusters with seven stack exports each (what
the test program has), and the stored state per resource is measured, to show where the
per-cluster cost goes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench.harness import (
    GPU_TYPE,
    REGION,
    baseline_stack,
    cluster_stack,
    clusters,
    median,
    new_env,
    set_config,
    simulator,
    state_bytes_per_resource,
    timed,
    timed_cpu,
)

TIME_SCALE = 3600  # provisioning 0.1 s, so growing the stack to 100 clusters stays bounded


def measure(root: Path, sizes: list[int], repeats: int) -> list[dict[str, Any]]:
    env = new_env(root / "scaling")
    rows = []
    with simulator(root, TIME_SCALE) as sim:
        sim.set_capacity(REGION, GPU_TYPE, standard_gpus=8 * max(sizes) + 256)
        stack = cluster_stack(env, sim, {})
        base = baseline_stack(env, 0)
        for n in sizes:
            set_config(stack, "clusters", clusters(n))
            set_config(base, "count", n)
            setup = timed(stack.up)
            base.up()
            keys = ("cp", "bp", "cu", "bu", "ep", "cp_cpu", "bp_cpu")
            times: dict[str, list[float]] = {k: [] for k in keys}
            sim.reset_requests()
            for _ in range(repeats):
                for key, fn in (("cp", stack.preview), ("bp", base.preview)):
                    wall, cpu = timed_cpu(fn)
                    times[key].append(wall)
                    times[f"{key}_cpu"].append(cpu)
                times["cu"].append(timed(stack.up))
                times["bu"].append(timed(base.up))
            api_calls = len(sim.requests())
            cluster_state = state_bytes_per_resource(env, stack, n)
            set_config(stack, "exports", "true")
            stack.up()
            for _ in range(repeats):
                times["ep"].append(timed(stack.preview))
            set_config(stack, "exports", "false")
            stack.up()
            cp, bp, cu, bu, ep, cp_cpu, bp_cpu = (median(times[k]) for k in keys)
            rows.append(
                {
                    "n": n,
                    "repeats": repeats,
                    "preview_s": round(cp, 2),
                    "baseline_preview_s": round(bp, 2),
                    "preview_ratio": round(cp / bp, 2),
                    "noop_up_s": round(cu, 2),
                    "baseline_noop_up_s": round(bu, 2),
                    "noop_up_ratio": round(cu / bu, 2),
                    "api_calls_during_preview_and_noop_up": api_calls,
                    "preview_with_exports_s": round(ep, 2),
                    "preview_cpu_s": round(cp_cpu, 2),
                    "baseline_preview_cpu_s": round(bp_cpu, 2),
                    "preview_cpu_ratio": round(cp_cpu / bp_cpu, 2),
                    "state_bytes_per_cluster": cluster_state,
                    "state_bytes_per_baseline_resource": state_bytes_per_resource(env, base, n),
                    "setup_up_s": round(setup, 1),
                }
            )
            print(f"  N={n}: {rows[-1]}", flush=True)
    return rows
