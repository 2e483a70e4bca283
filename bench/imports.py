"""What a preview imports: modules loaded by the program's and the provider's imports, against
Pulumi's own `pulumi.dynamic` (what the do-nothing baseline loads). Exact counts, no timing."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from bench.harness import REPO

HEAVY = ("pydantic", "pydantic_core", "httpx", "httpcore", "anyio", "grpc", "dill")

_PROBE = """
import json, sys
{statement}
print(json.dumps(sorted(sys.modules)))
"""


def _loaded(statement: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE.format(statement=statement)],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    ).stdout
    return set(json.loads(out))


def measure() -> dict[str, Any]:
    baseline = _loaded("import pulumi.dynamic")
    preview = _loaded(
        "import pulumi.dynamic\n"
        "from together_provider import Cluster, ClusterArgs\n"
        "from together_provider.cluster.provider import ClusterProvider"
    )
    apply = _loaded("from together_provider.cluster.lifecycle import ClusterLifecycle")
    return {
        "baseline_modules": len(baseline),
        "preview_modules": len(preview),
        "extra_in_preview": len(preview - baseline),
        "heavy_in_preview": sorted({m.split(".")[0] for m in preview - baseline} & set(HEAVY)),
        "heavy_on_first_apply": sorted({m.split(".")[0] for m in apply} & set(HEAVY)),
    }
