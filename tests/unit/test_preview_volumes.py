"""Shared volumes in the PR comment, on small hand-written `pulumi preview --json` documents."""

from __future__ import annotations

from typing import Any

from together_provider.cluster.table import CLUSTER_TYPE
from together_provider.preview import Outcome, build_plan, load_price_table, render
from together_provider.volume.table import VOLUME_TYPE

PROJECT = "together-gpu-clusters"
STORAGE = load_price_table().storage_per_tib_month


def _urn(type_: str, name: str) -> str:
    return f"urn:pulumi:dev::{PROJECT}::pulumi:pulumi:Stack${type_}::{name}"


def _volume(size: int, *, independent: bool = True) -> dict[str, Any]:
    inputs = {"volume_name": "ckpt", "region": "us-central-8", "size_tib": size}
    inputs["is_lifecycle_independent"] = independent
    return {"type": VOLUME_TYPE, "inputs": inputs, "outputs": {**inputs, "volume_id": "vol-1"}}


def _cluster() -> dict[str, Any]:
    inputs = {"cluster_name": "train", "gpu_type": "H100_SXM", "num_gpus": 8, "volume_id": "vol-1"}
    return {"type": CLUSTER_TYPE, "inputs": inputs, "outputs": inputs}


def _comment(*steps: dict[str, Any]) -> tuple[Any, str]:
    document = {"config": {f"{PROJECT}:clusters": "{}"}, "steps": list(steps), "changeSummary": {}}
    plan = build_plan(document, "dev.json", load_price_table())
    return plan, render([plan])


def test_the_price_table_has_a_placeholder_storage_rate() -> None:
    assert STORAGE is not None and STORAGE > 0
    assert "PLACEHOLDER" in load_price_table().source


def test_a_new_volume_costs_its_size_per_month() -> None:
    assert STORAGE is not None
    step = {"op": "create", "urn": _urn(VOLUME_TYPE, "ckpt"), "newState": _volume(3)}
    plan, comment = _comment(step)
    assert plan.outcome is Outcome.CHANGES
    assert (
        f"| `ckpt` | create | — → 3 | — → ${3 * STORAGE:,.2f}† | +${3 * STORAGE:,.2f}† |" in comment
    )


def test_a_deleted_volume_needs_approval_and_says_its_data_goes() -> None:
    step = {"op": "delete", "urn": _urn(VOLUME_TYPE, "ckpt"), "oldState": _volume(3)}
    plan, comment = _comment(step)
    assert plan.outcome is Outcome.REPLACEMENT
    assert "shared volume `ckpt` is **deleted**: its 3 TiB of checkpoints go with it" in comment


def test_a_volume_that_is_not_lifecycle_independent_goes_with_its_deleted_cluster() -> None:
    cluster = {"op": "delete", "urn": _urn(CLUSTER_TYPE, "train"), "oldState": _cluster()}
    volume = {
        "op": "same",
        "urn": _urn(VOLUME_TYPE, "ckpt"),
        "oldState": _volume(3, independent=False),
        "newState": _volume(3, independent=False),
    }
    _plan, comment = _comment(cluster, volume)
    assert "Together deletes shared volume `ckpt` with cluster `train`" in comment
    assert "outlives" not in comment


def test_without_the_volume_in_the_preview_the_note_names_its_id() -> None:
    cluster = {"op": "delete", "urn": _urn(CLUSTER_TYPE, "train"), "oldState": _cluster()}
    _plan, comment = _comment(cluster)
    assert "Shared volume `vol-1` outlives cluster `train`: storage keeps billing after" in comment
