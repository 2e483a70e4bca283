"""`pulumi up` creating 1 vs 12 clusters, on the dynamic provider and on the native plugin.

Why: a create waits until its cluster is Ready, and Pulumi's dynamic-provider host serves at most
four calls at once (`ThreadPoolExecutor(max_workers=4)` in `pulumi.dynamic.__main__`), so twelve
new clusters provision in three rounds; the native plugin waits on all twelve side by side. Each
cell is one `pulumi up --parallel 64` of fresh clusters against a fresh simulator whose
provisioning takes `PROVISIONING_S` real seconds, so the ratio N=12 / N=1 is the figure (the goal
for the native plugin: within 1.3x).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

from bench.harness import API_KEY, BASE, REPO, median, timed
from testkit.pulumi_env import PulumiEnv, Secret, engine_bin, native_pulumi_env
from testkit.sim import SimulatorProcess

PROVISIONING_S: Final = 10.0
SIZES: Final = (1, 12)
PARALLEL: Final = 64
PROGRAM: Final = REPO / "tests" / "integration" / "programs" / "cluster"  # config `host` picks
HOSTS: Final = ("dynamic", "native")
GOAL: Final = 1.3


def _up_seconds(env: PulumiEnv, root: Path, host: str, n: int, repeat: int) -> float:
    """One `pulumi up` of `n` new clusters on a fresh stack and a fresh simulator."""
    work = env.root / "projects" / host
    if not work.exists():
        work = env.project(PROGRAM, name=host)
    extra = ("--provisioning-seconds", str(PROVISIONING_S))
    with SimulatorProcess(
        root / f"sim-{host}-{n}", time_scale=1, api_key=API_KEY, extra_args=extra
    ) as sim:
        stack = env.stack(
            work,
            f"{host}-{n}-r{repeat}",
            config={
                "clusters": json.dumps({f"c{i:02d}": BASE for i in range(n)}),
                "host": host,
                "together:apiKey": Secret(sim.api_key),
                "together:baseUrl": sim.base_url,
            },
        )
        return timed(lambda: stack.up(parallel=PARALLEL))


def measure(root: Path, repeats: int = 1) -> dict[str, Any]:
    """Rows of (host, N, median seconds) and each host's N=12 / N=1 ratio."""
    env = native_pulumi_env(root / "hosts", engine_bin())
    times: dict[tuple[str, int], list[float]] = {}
    for repeat in range(repeats):
        for n in SIZES:
            for host in HOSTS:
                seconds = _up_seconds(env, root / f"r{repeat}", host, n, repeat)
                times.setdefault((host, n), []).append(seconds)
                print(f"  {host} N={n}: {seconds:.1f} s", flush=True)
    rows: list[dict[str, Any]] = [
        {"host": host, "n": n, "up_s": round(median(values), 1), "runs": len(values)}
        for (host, n), values in times.items()
    ]
    ratios = {}
    for host in HOSTS:
        by_n = {r["n"]: r["up_s"] for r in rows if r["host"] == host}
        ratios[host] = round(by_n[SIZES[-1]] / by_n[SIZES[0]], 2)
    return {
        "provisioning_s": PROVISIONING_S,
        "parallel": PARALLEL,
        "goal": GOAL,
        "rows": rows,
        "ratio_12_to_1": ratios,
    }


def markdown(result: dict[str, Any]) -> list[str]:
    """The report section (bench/report.py appends it)."""
    ratios = result["ratio_12_to_1"]
    lines = [
        "## Concurrency: `pulumi up` creating 1 vs 12 clusters, per provider host",
        "",
        f"Fresh clusters whose provisioning takes {result['provisioning_s']:.0f} real seconds, "
        f"`--parallel {result['parallel']}`; median of {result['rows'][0]['runs']} run(s) "
        "per cell, alternating hosts.",
        "",
        "| Host | N=1 (s) | N=12 (s) | N=12 / N=1 |",
        "|---|---|---|---|",
    ]
    for host, ratio in ratios.items():
        times = {r["n"]: r["up_s"] for r in result["rows"] if r["host"] == host}
        lines.append(f"| {host} | {times[1]} | {times[12]} | {ratio} |")
    verdict = "meets" if ratios["native"] <= result["goal"] else "misses"
    lines += [
        "",
        f"The dynamic host runs four creates at a time (three rounds for twelve); the native "
        f"plugin {verdict} the goal of {result['goal']}x.",
        "",
    ]
    return lines
