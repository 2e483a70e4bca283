"""Program-side CPU per resource: declaring N Clusters vs N do-nothing resources against Pulumi's
mocks (no engine), each in a fresh interpreter. Shows how much of the per-cluster preview cost
is the SDK's per-property work in the program (a Cluster has ~20 properties, inputs and
outputs; the do-nothing resource one)."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

from bench.harness import REPO

_PROGRAM = """
import asyncio, sys, time
sys.path.insert(0, {baseline!r})
import pulumi

class Mocks(pulumi.runtime.Mocks):
    def new_resource(self, args):
        return [args.name + "-id", args.inputs]

    def call(self, args):
        return {{}}

pulumi.runtime.set_mocks(Mocks(), preview=True)
from together_provider import Cluster, ClusterArgs
from noop_provider import Noop

spec = dict(region="us-central-8", gpu_type="H100_SXM", num_gpus=8, cuda_version="12.8",
            nvidia_driver_version="570", project_id="p")
start = time.process_time()
if {kind!r} == "cluster":
    outs = [Cluster(f"c{{i}}", ClusterArgs(**spec)).cluster_id for i in range({n})]
else:
    outs = [Noop(f"n{{i}}", f"v{{i}}").urn for i in range({n})]
asyncio.get_event_loop().run_until_complete(asyncio.gather(*[o.future() for o in outs]))
print((time.process_time() - start) / {n} * 1000)
"""


def _ms_per_resource(kind: str, n: int) -> float:
    code = _PROGRAM.format(kind=kind, n=n, baseline=str(REPO / "bench" / "programs" / "baseline"))
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    ).stdout
    return float(out.strip().splitlines()[-1])


def measure(n: int = 300, repeats: int = 3) -> dict[str, Any]:
    cluster = min(_ms_per_resource("cluster", n) for _ in range(repeats))
    noop = min(_ms_per_resource("noop", n) for _ in range(repeats))
    return {
        "resources": n,
        "cluster_cpu_ms": round(cluster, 2),
        "noop_cpu_ms": round(noop, 2),
    }
