"""Shared plumbing: an isolated Pulumi environment, simulators, stacks and a wall-clock timer."""

from __future__ import annotations

import json
import resource
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pulumi import automation as auto

from testkit.pulumi_env import PulumiEnv, Secret, engine_bin
from testkit.sim import SimulatorProcess

REPO = Path(__file__).resolve().parent.parent
CLUSTER_PROGRAM = Path(__file__).resolve().parent / "programs" / "clusters"
BASELINE_PROGRAM = Path(__file__).resolve().parent / "programs" / "baseline"
API_KEY = "sk-bench-3c1d"
REGION, GPU_TYPE = "us-central-8", "H100_SXM"
BASE: dict[str, Any] = {
    "region": REGION,
    "gpu_type": GPU_TYPE,
    "num_gpus": 8,
    "cuda_version": "12.8",
    "nvidia_driver_version": "570",
    "project_id": "proj-bench",
}


def new_env(root: Path) -> PulumiEnv:
    return PulumiEnv(root=root, bin_dir=engine_bin())


def simulator(root: Path, time_scale: float, *extra: str) -> SimulatorProcess:
    """A simulator (not yet started) with its own state dir under `root`."""
    return SimulatorProcess(
        root / f"sim-{time.monotonic_ns()}",
        time_scale=time_scale,
        api_key=API_KEY,
        extra_args=extra,
    )


def cluster_stack(
    env: PulumiEnv,
    sim: SimulatorProcess,
    clusters: dict[str, Any],
    name: str = "bench",
    *,
    exports: bool = False,
) -> auto.Stack:
    """The bench's cluster program; `exports` adds seven stack outputs per cluster."""
    work = env.root / "projects" / "clusters"
    if not work.exists():
        work = env.project(CLUSTER_PROGRAM)
    return env.stack(
        work,
        name,
        config={
            "clusters": json.dumps(clusters),
            "exports": "true" if exports else "false",
            "together:apiKey": Secret(sim.api_key),
            "together:baseUrl": sim.base_url,
        },
    )


def state_bytes_per_resource(env: PulumiEnv, stack: auto.Stack, n: int) -> int:
    """Bytes of the stored state (as `pulumi stack export` writes it) per resource."""
    state = env.exported_state(Path(stack.workspace.work_dir), stack.name)
    return len(json.dumps(state)) // max(n, 1)


def baseline_stack(env: PulumiEnv, count: int) -> auto.Stack:
    work = env.root / "projects" / "baseline"
    if not work.exists():
        work = env.project(BASELINE_PROGRAM)
    return env.stack(work, "bench", config={"count": count})


def set_config(stack: auto.Stack, key: str, value: Any) -> None:
    text = value if isinstance(value, str) else json.dumps(value)
    stack.set_config(key, auto.ConfigValue(text))


def clusters(n: int, **spec: Any) -> dict[str, Any]:
    return {f"c{i:03d}": {**BASE, **spec} for i in range(n)}


def timed(fn: Callable[[], Any]) -> float:
    """Wall seconds of one call."""
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def timed_cpu(fn: Callable[[], Any]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one call that runs the CLI.

    The CPU time is user + system of every process the call started and reaped (the CLI, the
    language host, the program and the provider plugins): on a shared machine it moves far less
    with the load than the wall time does.
    """
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    fn()
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def median(values: list[float]) -> float:
    return statistics.median(values)
