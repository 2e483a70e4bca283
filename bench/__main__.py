"""`python -m bench [--quick] [--write-benchmarks-md]`: run every benchmark, write the report."""

from __future__ import annotations

import argparse
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench import (
    api_calls,
    hooks,
    host_concurrency,
    imports,
    readiness,
    registration,
    report,
    scaling,
)
from bench.harness import REPO

OUT = Path(__file__).resolve().parent / "out"
# Not multiples of the 30 s poll cap, so the lag shows its spread (it is 0..30 s past the cap).
PROVISIONING_SECONDS = (100.0, 345.0, 360.0, 610.0, 1000.0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="N = 1, 10 only; fewer repeats")
    parser.add_argument(
        "--write-benchmarks-md", action="store_true", help="also write BENCHMARKS.md at the root"
    )
    args = parser.parse_args(argv)
    sizes = [1, 10] if args.quick else [1, 10, 50, 100]
    repeats = 2 if args.quick else 5
    started = time.monotonic()
    result: dict[str, Any] = {
        "when": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "quick": args.quick,
        "machine": report.machine(),
    }
    with tempfile.TemporaryDirectory(prefix="together-bench-") as tmp:
        root = Path(tmp)
        print("imports of a preview ...", flush=True)
        result["imports"] = imports.measure()
        print("program-side registration ...", flush=True)
        result["registration"] = registration.measure()
        print("check + diff in process ...", flush=True)
        result["hooks"] = hooks.measure(number=500 if args.quick else 2000)
        print("API calls per operation ...", flush=True)
        result["api_calls"] = api_calls.measure(root)
        print("readiness detection ...", flush=True)
        result["readiness"] = {
            "virtual_time": [readiness.virtual_time(root, s) for s in PROVISIONING_SECONDS],
            "through_engine": readiness.through_engine(root, 2 if args.quick else 3),
        }
        print(f"engine wall time for N = {sizes} ...", flush=True)
        result["scaling"] = scaling.measure(root, sizes, repeats)
        print(
            "concurrency: pulumi up of 1 vs 12 clusters, dynamic and native hosts ...", flush=True
        )
        result["host_concurrency"] = host_concurrency.measure(root, 1 if args.quick else 2)
    result["duration_s"] = round(time.monotonic() - started)
    json_path, md_path = report.write(result, OUT)
    print(f"report: {md_path}\n        {json_path}")
    if args.write_benchmarks_md:
        (REPO / "BENCHMARKS.md").write_text(report.markdown(result))
        print(f"        {REPO / 'BENCHMARKS.md'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
