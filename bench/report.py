"""The report: one JSON document and the same figures as Markdown (also used for BENCHMARKS.md)."""

from __future__ import annotations

import json
import platform
from pathlib import Path
from typing import Any

from bench import host_concurrency

CAVEAT = (
    "Measured on a 2-core VM shared with other engineers' builds: wall times are noisy and only "
    "comparable within one run, which is why every engine figure stands beside a baseline "
    "measured in the same run. API call counts and virtual-time figures are exact."
)


def machine() -> dict[str, Any]:
    import os

    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


def _table(rows: list[dict[str, Any]], columns: list[tuple[str, str]]) -> list[str]:
    lines = ["| " + " | ".join(title for title, _ in columns) + " |"]
    lines.append("|" + "---|" * len(columns))
    for row in rows:
        lines.append("| " + " | ".join(str(row.get(key, "")) for _, key in columns) + " |")
    return lines


def _scaling_reading(rows: list[dict[str, Any]]) -> list[str]:
    """Split the preview time into a fixed part and a per-cluster part, against the baseline."""
    if len(rows) < 2:
        return []
    first, last = rows[0], rows[-1]
    span = float(last["n"] - first["n"])

    def slope(key: str) -> float:
        return float(last[key] - first[key]) / span * 1000

    fixed = first["preview_s"] - first["baseline_preview_s"]
    return [
        "",
        f"Reading it: at N={first['n']} the Cluster stack's preview costs {fixed:.2f} s more than "
        "the baseline (a fixed cost: importing pydantic, httpx and the provider package in the "
        "program and in the provider process). Between N="
        f"{first['n']} and N={last['n']} each more cluster adds {slope('preview_s'):.1f} ms "
        f"to preview against {slope('baseline_preview_s'):.1f} ms per do-nothing resource, "
        f"and {slope('noop_up_s'):.1f} ms against {slope('baseline_noop_up_s'):.1f} ms to a "
        "no-op up; the provider's own check + diff is about 0.1 ms of that (last section).",
    ]


def markdown(report: dict[str, Any]) -> str:
    out = [
        "# Benchmarks",
        "",
        "Run `make bench` (or `.venv/bin/python -m bench [--quick]`); the report goes to "
        "`bench/out/`, and `--write-benchmarks-md` also rewrites this file. Generated "
        f"{report['when']}"
        f" ({'quick' if report['quick'] else 'full'} run, {report['duration_s']} s).",
        "",
        f"> {CAVEAT}",
        "",
        f"Machine: {report['machine']}",
        "",
        "## API calls per operation (one cluster, simulator at time_scale 600)",
        "",
    ]
    calls = [
        {**r, "by_request": ", ".join(f"{k} x{n}" for k, n in r["by_request"].items()) or "-"}
        for r in report["api_calls"]
    ]
    out += _table(
        calls,
        [
            ("Operation", "operation"),
            ("Calls", "total"),
            ("Minimum", "minimum"),
            ("Requests", "by_request"),
            ("Why that minimum", "why"),
        ],
    )
    out += [
        "",
        "Create and standard-scale poll counts depend on how long provisioning takes against the "
        "poll schedule (1 s, x1.5 per poll, capped at 30 s); see readiness below.",
        "",
        "## Engine wall time: preview and no-op up, N clusters vs N do-nothing dynamic resources",
        "",
    ]
    out += _table(
        report["scaling"],
        [
            ("N", "n"),
            ("preview (s)", "preview_s"),
            ("baseline preview (s)", "baseline_preview_s"),
            ("ratio", "preview_ratio"),
            ("no-op up (s)", "noop_up_s"),
            ("baseline no-op up (s)", "baseline_noop_up_s"),
            ("ratio", "noop_up_ratio"),
            ("API calls", "api_calls_during_preview_and_noop_up"),
        ],
    )
    out += [
        "",
        f"Median of {report['scaling'][0]['repeats'] if report['scaling'] else 0} alternating "
        "runs per cell. API calls: every preview and no-op up of that row together.",
        *_scaling_reading(report["scaling"]),
        "",
        "## Readiness detection",
        "",
        "Virtual time (the provider's real create and poll schedule, simulator clock advanced "
        "by the client's sleeps; exact):",
        "",
    ]
    out += _table(
        report["readiness"]["virtual_time"],
        [
            ("provisioning (s)", "provisioning_s"),
            ("lag after Ready (s)", "lag_s"),
            ("create took (s)", "create_s"),
            ("polls (GET cluster)", "polls"),
            ("all calls", "calls"),
        ],
    )
    out += ["", "Through the engine (`pulumi up` of one new cluster, time_scale 600):", ""]
    out += _table(
        report["readiness"]["through_engine"],
        [
            ("lag upper bound (simulated s)", "lag_upper_bound_s"),
            ("= real s", "lag_upper_bound_real_s"),
            ("polls", "polls"),
            ("all calls", "calls"),
        ],
    )
    hooks = report["hooks"]
    out += [
        "",
        "The engine-run bound is dominated by the engine's wrap-up after create returns and by "
        "the first poll interval (1 s real = 600 simulated s at this scale): it reflects the "
        "time scale, not the provider. Read the virtual-time table for real clusters: once "
        "polls reach the 30 s cap, Ready is noticed 0..30 s late (15 s on average).",
        "",
        "## In-process cost of check + diff",
        "",
        f"{hooks['iterations']} calls x best of {hooks['repeat']}, microseconds per call:",
        "",
    ]
    out += [f"- {name}: {us} us" for name, us in hooks["microseconds_per_call"].items()]
    out += [
        "",
        f"check + diff per resource: {hooks['check_plus_diff_us']} us, i.e. "
        f"{hooks['check_plus_diff_for_100_clusters_ms']} ms for 100 clusters per preview.",
        "",
    ]
    if "host_concurrency" in report:
        out += host_concurrency.markdown(report["host_concurrency"])
    return "\n".join(out)


def write(report: dict[str, Any], out_dir: Path) -> tuple[Path, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    stamp = report["when"].replace(":", "").replace("-", "")
    json_path, md_path = out_dir / f"bench-{stamp}.json", out_dir / f"bench-{stamp}.md"
    json_path.write_text(json.dumps(report, indent=2) + "\n")
    md_path.write_text(markdown(report))
    (out_dir / "latest.json").write_text(json_path.read_text())
    (out_dir / "latest.md").write_text(md_path.read_text())
    return json_path, md_path
