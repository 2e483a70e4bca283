"""API calls per operation of one cluster, beside the fewest that operation can possibly need."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from bench.harness import cluster_stack, clusters, new_env, set_config, simulator
from testkit.sim import SimulatorProcess

TIME_SCALE = 600  # 360 simulated seconds of provisioning = 0.6 s

# operation -> (minimum calls, why)
MINIMUM: dict[str, tuple[int, str]] = {
    "create": (
        3,
        "GET list (the duplicate-name guard: a crash between POST and the state write must not "
        "lead to a second cluster), POST, and at least one GET that sees Ready",
    ),
    "preemptible target change": (1, "one PUT; Together fills the target asynchronously"),
    "standard scale": (2, "one PUT, then at least one GET confirming the cluster is Ready"),
    "no-op up": (0, "check and diff are pure; nothing changed"),
    "preview": (0, "check and diff only"),
    "refresh": (1, "one GET per cluster"),
    "destroy": (
        2,
        "DELETE, then at least one GET answering 404: waiting until the cluster is gone keeps "
        "a re-create of the same name clear of the duplicate guard",
    ),
}


def _calls(sim: SimulatorProcess) -> dict[str, Any]:
    requests = sim.requests()
    by_kind = Counter(f"{r['method']} {r['path']}" for r in requests)
    return {"total": len(requests), "by_request": dict(sorted(by_kind.items()))}


def measure(root: Path) -> list[dict[str, Any]]:
    """Run each operation once through the engine and count the simulator's /v1 requests."""
    env = new_env(root / "api-calls")
    with simulator(root, TIME_SCALE) as sim:
        one = clusters(1, num_preemptible_gpus=8)
        stack = cluster_stack(env, sim, one)
        steps: list[tuple[str, Any]] = [
            ("create", stack.up),
            ("preemptible target change", None),
            ("standard scale", None),
            ("no-op up", stack.up),
            ("preview", stack.preview),
            ("refresh", stack.refresh),
            ("destroy", stack.destroy),
        ]
        rows = []
        for name, action in steps:
            if name == "preemptible target change":
                set_config(stack, "clusters", clusters(1, num_preemptible_gpus=16))
                action = stack.up
            elif name == "standard scale":
                set_config(stack, "clusters", clusters(1, num_gpus=16, num_preemptible_gpus=16))
                action = stack.up
            sim.reset_requests()
            action()
            minimum, why = MINIMUM[name]
            rows.append({"operation": name, **_calls(sim), "minimum": minimum, "why": why})
    return rows
