"""`python -m bench [--quick] [--only SECTION,...] [--write-benchmarks-md]`: run the benchmarks,
write the report."""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench import (
    api_calls,
    autoscaler,
    control_plane,
    drill,
    hooks,
    host_concurrency,
    imports,
    readiness,
    real_nodes,
    registration,
    report,
    scaling,
)
from bench.harness import REPO
from mutate.report import replace_section, section_of

OUT = Path(__file__).resolve().parent / "out"
# Not multiples of the 30 s poll cap, so the lag shows its spread (it is 0..30 s past the cap).
PROVISIONING_SECONDS = (100.0, 345.0, 360.0, 610.0, 1000.0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="N = 1, 10 only; fewer repeats")
    parser.add_argument(
        "--write-benchmarks-md", action="store_true", help="also write BENCHMARKS.md at the root"
    )
    parser.add_argument(
        "--only",
        metavar="SECTION[,SECTION]",
        help="run only these sections (the report shows only them), e.g. control_plane",
    )
    args = parser.parse_args(argv)
    if args.write_benchmarks_md and args.only:
        parser.error("--write-benchmarks-md rewrites the whole file: run every section")
    sizes = [1, 10] if args.quick else [1, 10, 50, 100]
    repeats = 2 if args.quick else 5
    started = time.monotonic()
    result: dict[str, Any] = {
        "when": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "quick": args.quick,
        "machine": report.machine(),
    }
    steps: dict[str, tuple[str, Callable[[Path], Any]]] = {
        "imports": ("imports of a preview", lambda root: imports.measure()),
        "registration": ("program-side registration", lambda root: registration.measure()),
        "hooks": (
            "check + diff in process",
            lambda root: hooks.measure(number=500 if args.quick else 2000),
        ),
        "api_calls": ("API calls per operation", api_calls.measure),
        "readiness": (
            "readiness detection",
            lambda root: {
                "virtual_time": [readiness.virtual_time(root, s) for s in PROVISIONING_SECONDS],
                "through_engine": readiness.through_engine(root, 2 if args.quick else 3),
            },
        ),
        "scaling": (
            f"engine wall time for N = {sizes}",
            lambda root: scaling.measure(root, sizes, repeats),
        ),
        "host_concurrency": (
            "concurrency: pulumi up of 1 vs 12 clusters, dynamic and native hosts",
            lambda root: host_concurrency.measure(root, 1 if args.quick else 2),
        ),
        "autoscaler": (
            "preemptible autoscaler: scan time, PUTs per burst, RSS and CPU",
            lambda root: autoscaler.measure(args.quick),
        ),
        "control_plane": (
            "Kubernetes control plane per cluster: start, memory, idle CPU",
            lambda root: control_plane.measure(root, args.quick),
        ),
        "real_nodes": (
            "real nodes against KWOK nodes: start to Ready, pod start, memory, reclaim to SIGTERM",
            lambda root: real_nodes.measure(root, args.quick),
        ),
        "drill": (
            "the drill: wall time of one reclaim of a 30 s workload",
            lambda root: drill.measure(root, args.quick),
        ),
    }
    only = args.only.split(",") if args.only else list(steps)
    unknown = sorted(set(only) - set(steps))
    if unknown:
        parser.error(f"--only: unknown section(s) {unknown}; choose from {', '.join(steps)}")
    with tempfile.TemporaryDirectory(prefix="together-bench-") as tmp:
        root = Path(tmp)
        for name in only:
            what, measure = steps[name]
            print(f"{what} ...", flush=True)
            result[name] = measure(root)
    result["duration_s"] = round(time.monotonic() - started)
    result["budgets"] = report.BUDGETS
    json_path, md_path = report.write(result, OUT)
    print(f"report: {md_path}\n        {json_path}")
    if args.write_benchmarks_md:
        path = REPO / "BENCHMARKS.md"
        # make mutate writes its own section of the file: kept as it was.
        mutation = section_of(path.read_text()) if path.exists() else None
        text = report.markdown(result)
        path.write_text(text if mutation is None else replace_section(text, mutation))
        print(f"        {REPO / 'BENCHMARKS.md'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
