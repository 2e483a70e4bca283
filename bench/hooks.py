"""In-process cost of the provider's `check` and `diff` per resource: they run for every cluster
on every preview and up, so they bound how the provider itself scales (no API call in either)."""

from __future__ import annotations

import timeit
from typing import Any

from together_provider.cluster.provider import ClusterProvider

NEWS: dict[str, Any] = {
    # As the engine sends them: numbers as floats, no None values.
    "cluster_name": "train",
    "region": "us-central-8",
    "gpu_type": "H100_SXM",
    "num_gpus": 16.0,
    "num_preemptible_gpus": 24.0,
    "cuda_version": "12.8",
    "nvidia_driver_version": "570",
    "project_id": "proj-bench",
    "cluster_type": "KUBERNETES",
    "billing_type": "ON_DEMAND",
    "ready_timeout_seconds": 1800.0,
}
OUTPUTS: dict[str, Any] = {
    **NEWS,
    "cluster_id": "2f9c6a51-5b0e-4a8e-9a53-0c6b1f6f4b1e",
    "status": "Ready",
    "desired_preemptible_gpus": 24.0,
    "allocated_preemptible_gpus": 16.0,
    "kube_config": "apiVersion: v1\n" + "x" * 900,
    "control_plane_ready": True,
    "created_at": "2026-01-01T00:00:00+00:00",
    "preemption_events": [
        {
            "node_id": f"n{i}",
            "reason": "TogetherPreemptionNotified",
            "message": "m",
            "timestamp": "t",
        }
        for i in range(5)
    ],
}


def measure(number: int, repeat: int = 5) -> dict[str, Any]:
    """Best-of-`repeat` microseconds per call, `number` calls each (timeit's own advice)."""
    provider = ClusterProvider()
    inputs = {k: v for k, v in OUTPUTS.items() if k in NEWS}
    changed = {**NEWS, "num_preemptible_gpus": 32.0}
    cases = {
        "check (update, unchanged)": lambda: provider.check(inputs, NEWS),
        "check (create)": lambda: provider.check({}, NEWS),
        "diff (no change)": lambda: provider.diff("id", OUTPUTS, NEWS),
        "diff (target change)": lambda: provider.diff("id", OUTPUTS, changed),
    }
    # Measure the real paths: a valid spec, a no-op diff and an in-place change.
    assert provider.check(inputs, NEWS).failures == []
    assert provider.diff("id", OUTPUTS, NEWS).changes is False
    assert provider.diff("id", OUTPUTS, changed).changes is True
    results = {
        name: round(min(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e6, 1)
        for name, fn in cases.items()
    }
    per_resource = results["check (update, unchanged)"] + results["diff (no change)"]
    return {
        "iterations": number,
        "repeat": repeat,
        "microseconds_per_call": results,
        "check_plus_diff_us": round(per_resource, 1),
        "check_plus_diff_for_100_clusters_ms": round(per_resource * 100 / 1000, 2),
    }
