"""The drill's wall time: `python -m together_drill` run as a user runs it, one reclaim of a 30 s
workload (tests/integration/drill/good.py's shape: together_worker, 30 steps of ~1 s, a
checkpoint every 5 steps and at SIGTERM), a 6 s grace, the local world with two real nodes.

Why: issue 41 wants a one-reclaim drill of a 30 s workload to take at most 90 s wall on 2 cores.
The figure is the whole command's wall time (starting the simulator, its control plane and real
nodes, the Job, the reclaim, the Job's end, stopping everything), beside the drill's own phases
read from its progress lines on stderr ("[drill +  12.3s] ...": seconds since it started)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Final

from bench.harness import REPO
from bench.real_nodes import real_nodes_here
from together_sim.host.images import IMAGES_ENV

BUDGET_S: Final = 90.0
PYTHON: Final = "localhost/together-python:3.11"
WORKLOAD: Final = """
import time
from together_worker import Worker

worker = Worker.from_env()
latest = worker.latest()
start = latest.step if latest else 0
for _ in worker.steps(30, start=start, every=5, save=lambda f: f.write(b"x")):
    time.sleep(1)
"""
PHASES: Final = {
    "world_up_s": "Job drill created",
    "reclaim_s": "reclaim 1: node",
    "job_end_wait_s": "waiting for Job",
    "cleanup_s": "cleaning up",
}
"""Each phase's figure: the drill's clock at its first progress line containing the text."""
_LINE: Final = re.compile(r"^\[drill \+\s*([0-9.]+)s\] (.*)$")


def measure(root: Path, quick: bool = False) -> dict[str, Any]:
    binaries, images, why = real_nodes_here()
    if why:
        print(f"  drill skipped: {why}", flush=True)
        return {"skipped": why}
    began = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "together_drill", "--image", PYTHON, "--grace-seconds", "6",
         "--reclaims", "1", "--seed", "1", "--command", "python3", "-u", "-c", WORKLOAD],
        capture_output=True, text=True, cwd=REPO, timeout=600,
        env={**os.environ, "TOGETHER_KUBE_BIN": str(binaries), IMAGES_ENV: images},
    )  # fmt: skip
    wall = time.monotonic() - began
    phases: dict[str, float] = {}
    for line in done.stderr.splitlines():
        match = _LINE.match(line)
        if match:
            for key, text in PHASES.items():
                if text in match.group(2):
                    phases.setdefault(key, float(match.group(1)))
    return {
        "wall_s": round(wall, 1),
        "exit_code": done.returncode,
        "verdict": done.stdout.strip().splitlines()[-1] if done.stdout.strip() else None,
        "phases": phases,
        "budget_s": BUDGET_S,
    }


def markdown(found: dict[str, Any]) -> list[str]:
    out = ["", "## The drill: one reclaim of a 30 s workload", ""]
    if "skipped" in found:
        return [*out, f"Skipped: {found['skipped']}.", ""]
    phases = found["phases"]

    def at(key: str) -> str:
        return f"{phases[key]:.1f}" if key in phases else "-"

    out += [
        "`python -m together_drill --image ... --reclaims 1`, a together_worker loop of 30 steps "
        "of 1 s, local world with two real nodes (bench/drill.py says how each figure is taken). "
        f"Budget: {found['budget_s']:.0f} s wall.",
        "",
        "| Wall (s) | Exit | Verdict | Job created at (s) | Reclaim at (s) | Waiting for the "
        "Job's end at (s) | Cleanup at (s) |",
        "|---|---|---|---|---|---|---|",
        f"| {found['wall_s']} | {found['exit_code']} | {found['verdict']} | {at('world_up_s')} | "
        f"{at('reclaim_s')} | {at('job_end_wait_s')} | {at('cleanup_s')} |",
        "",
    ]
    return out
