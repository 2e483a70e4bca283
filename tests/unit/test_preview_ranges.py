"""The PR comment on a declared range: the range and the live value, the cost at the floor and at
the ceiling, and a live value inside the range is no changed field."""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.test_preview_render import SPEC, _doc, _plan, _step
from together_provider.cluster.table import CLUSTER_TYPE
from together_provider.preview import load_price_table, render

RANGE = {**SPEC, "num_preemptible_gpus": 8, "max_preemptible_gpus": 32}


def _state(inputs: dict[str, Any], **outputs: Any) -> dict[str, Any]:
    inputs = {"__provider": "[secret]", "cluster_name": "train", "region": "us-central-8", **inputs}
    return {"type": CLUSTER_TYPE, "inputs": inputs, "outputs": {**inputs, **outputs}}


def _refreshed(live: int, new: dict[str, Any], op: str = "same") -> dict[str, Any]:
    """`preview --refresh --show-sames` after something moved the target to `live`: the old
    state holds the live value in the ranged floor (inputs and echo)."""
    old = _state({**RANGE, "num_preemptible_gpus": live}, desired_preemptible_gpus=live,
                 allocated_preemptible_gpus=16)  # fmt: skip
    return _doc(_step("refresh", "train", old, old), _step(op, "train", old, _state(new)))


def test_a_live_target_inside_the_range_shows_the_range_and_the_live_value() -> None:
    plan = _plan(_refreshed(24, RANGE))
    (cluster,) = plan.clusters
    assert cluster.fields == ()  # the live 24 is inside 8-32: not a changed field
    assert (cluster.new.preemptible, cluster.new.preemptible_max) == (8, 32)
    rate = load_price_table().rates["H100_SXM"]
    assert cluster.new_cost == pytest.approx(8 * rate + 8 * rate / 2)
    assert cluster.ceiling_cost == pytest.approx(8 * rate + 32 * rate / 2)
    comment = render([plan])
    assert "| 8\u201332, live 24 |" in comment
    assert (
        f"- `train`: preemptible 8\u201332, live 24: ${8 * rate + 4 * rate:,.2f}†/h at the "
        f"floor, ${8 * rate + 16 * rate:,.2f}†/h at the ceiling"
    ) in comment
    assert "Changed fields" not in comment


def test_a_live_target_outside_the_range_is_a_changed_field() -> None:
    (cluster,) = _plan(_refreshed(40, RANGE, op="update")).clusters
    [change] = cluster.fields
    # What the update PUTs: the nearest bound, not the floor.
    assert (change.name, change.old, change.new) == ("num_preemptible_gpus", 40, 32)


def test_a_lowered_ceiling_shows_both_ranges() -> None:
    comment = render([_plan(_refreshed(24, {**RANGE, "max_preemptible_gpus": 16}, "update"))])
    assert "| 8\u201332 → 8\u201316, live 24 |" in comment
    assert "- `train`.`max_preemptible_gpus`: `32` → `16`" in comment
    assert "- `train`.`num_preemptible_gpus`: `24` → `16`" in comment


def test_auto_scale_shows_the_standard_range() -> None:
    auto = {**SPEC, "auto_scale": True, "auto_scale_max_gpus": 32}
    old = _state({**auto, "num_gpus": 16}, desired_preemptible_gpus=16)
    comment = render([_plan(_doc(_step("same", "train", old, _state(auto))))])
    # Not refreshed: the value inside the range is the stored one, and says so.
    assert "| 8\u201332, stored 16 |" in comment
    assert "- `train`: standard 8\u201332, stored 16 (auto_scale):" in comment
    assert ", live " not in comment


def test_a_raised_floor_above_the_live_target_is_priced_as_the_put() -> None:
    """Floor 8 -> 24 with the target live at 16: the update PUTs 24, so the cost goes up by 8
    preemptible GPUs (pricing both sides at the new floor showed a delta of zero)."""
    rate = load_price_table().rates["H100_SXM"]
    (cluster,) = _plan(_refreshed(16, {**RANGE, "num_preemptible_gpus": 24}, "update")).clusters
    assert cluster.old_cost == pytest.approx(8 * rate + 16 * rate / 2)
    assert cluster.new_cost == pytest.approx(8 * rate + 24 * rate / 2)


def test_a_lowered_ceiling_below_the_live_target_is_priced_as_the_put() -> None:
    rate = load_price_table().rates["H100_SXM"]
    new = {**RANGE, "max_preemptible_gpus": 16}
    (cluster,) = _plan(_refreshed(24, new, "update")).clusters
    assert cluster.old_cost == pytest.approx(8 * rate + 24 * rate / 2)
    assert cluster.new_cost == pytest.approx(8 * rate + 16 * rate / 2)
