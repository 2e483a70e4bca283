"""The shared volumes' part of the PR comment (`volume/preview.py`) word for word: each volume's
change read from its states, the table, what a deletion or replacement loses, the notes on what
a deleted cluster leaves billing, and the storage rate's note. Grow or replace is data kept or
lost: every figure and word here is one a reviewer decides on."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace
from typing import Any

import pytest

from together_facts.prices import PriceTable
from together_provider.framework.schema import UNKNOWN
from together_provider.preview.plan import StackPlan
from together_provider.preview_parts.steps import Action
from together_provider.registry import BY_TYPE
from together_provider.volume.preview import (
    VolumeChange,
    VolumePreview,
    _money,
    rate_note,
    volume_change,
    volume_loss,
    volume_notes,
    volume_table,
)
from together_provider.volume.table import VOLUME_TYPE

DESTRUCTIVE = frozenset({Action.DELETE, Action.REPLACE})
GONE = frozenset({Action.DELETE, Action.REPLACE, Action.OTHER})


def _state(inputs: dict[str, Any], outputs: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"inputs": inputs, "outputs": outputs or {}}


def _change(**fields: Any) -> VolumeChange:
    base: dict[str, Any] = {
        "name": "ckpt",
        "action": Action.UPDATE,
        "volume_id": "vol-1",
        "old_size": 4,
        "new_size": 8,
        "exists": (True, True),
        "lifecycle_independent": True,
        "replace_reasons": (),
        "old_cost": 8.0,
        "new_cost": 16.0,
    }
    return VolumeChange(**{**base, **fields})


# --- volume_change: the states read ---------------------------------------------------------


def test_inputs_win_over_outputs_on_both_sides() -> None:
    old = _state(
        {"size_tib": 4, "is_lifecycle_independent": True}, {"size_tib": 3, "volume_id": "vol-1"}
    )
    new = _state(
        {"size_tib": 8, "is_lifecycle_independent": False}, {"size_tib": 4, "volume_id": "vol-1"}
    )
    assert volume_change("ckpt", Action.UPDATE, old, new, ("size_tib",), 2.0, True) == VolumeChange(
        name="ckpt",
        action=Action.UPDATE,
        volume_id="vol-1",
        old_size=4,
        new_size=8,
        exists=(True, True),
        lifecycle_independent=False,
        replace_reasons=("size_tib",),
        old_cost=8.0,
        new_cost=16.0,
        placeholder_price=True,
    )


def test_outputs_stand_in_for_inputs_a_state_lacks() -> None:
    change = volume_change(
        "v", Action.SAME, _state({}, {"size_tib": 5}), _state({}, {"size_tib": 6}), (), 1.0
    )
    assert (change.old_size, change.new_size, change.placeholder_price) == (5, 6, False)


def test_a_deleted_volume_keeps_its_old_facts_and_costs_nothing_after() -> None:
    old = _state({"size_tib": 3, "is_lifecycle_independent": False}, {"volume_id": "vol-9"})
    change = volume_change("v", Action.DELETE, old, None, (), 2.0)
    assert (change.volume_id, change.lifecycle_independent, change.exists) == (
        "vol-9",
        False,
        (True, False),
    )
    assert (change.old_size, change.new_size, change.old_cost, change.new_cost) == (
        3,
        None,
        6.0,
        0.0,
    )


def test_a_created_volume_cost_nothing_before() -> None:
    change = volume_change("v", Action.CREATE, None, _state({"size_tib": 2}), (), 3.0)
    assert (change.volume_id, change.old_size, change.old_cost, change.new_cost) == (
        None,
        None,
        0.0,
        6.0,
    )


@pytest.mark.parametrize(
    ("old", "volume_id", "independent"),
    [
        (_state({"is_lifecycle_independent": "yes"}, {"volume_id": 7}), None, None),
        (_state({}, {"volume_id": UNKNOWN}), None, None),
    ],
)
def test_values_of_the_wrong_type_or_unknown_are_not_known(
    old: dict[str, Any], volume_id: str | None, independent: bool | None
) -> None:
    change = volume_change("v", Action.DELETE, old, None, (), 1.0)
    assert (change.volume_id, change.lifecycle_independent) == (volume_id, independent)


@pytest.mark.parametrize("size", [2.5, True, "4", UNKNOWN, None])
def test_a_size_that_is_not_a_whole_number_is_unknown_and_so_is_its_cost(size: object) -> None:
    change = volume_change(
        "v", Action.UPDATE, _state({"size_tib": size}), _state({"size_tib": 4}), (), 2.0
    )
    assert (change.old_size, change.old_cost, change.new_cost) == (None, None, 8.0)


def test_without_a_storage_rate_costs_are_unknown_and_not_placeholders() -> None:
    change = volume_change(
        "v", Action.UPDATE, _state({"size_tib": 2}), _state({"size_tib": 4}), (), None, True
    )
    assert (change.old_cost, change.new_cost, change.placeholder_price) == (None, None, False)


# --- the table ---------------------------------------------------------------------------------


def test_the_table_word_for_word() -> None:
    volumes = [
        _change(placeholder_price=True),
        _change(name="same", action=Action.SAME, new_size=4, new_cost=8.0),
        _change(
            name="new", action=Action.CREATE, exists=(False, True), old_size=None, old_cost=0.0
        ),
        _change(
            name="old", action=Action.DELETE, exists=(True, False), new_size=None, new_cost=0.0
        ),
        _change(name="unpriced", old_cost=None, new_cost=None, old_size=None),
    ]
    assert volume_table(volumes, DESTRUCTIVE) == [
        "| Shared volume | Action | Size (TiB) | Est. storage cost/month | Δ/month |",
        "|---|---|--:|--:|--:|",
        "| `ckpt` | in-place update | 4 → 8 | $8.00† → $16.00† | +$8.00† |",
        "| `same` | unchanged | 4 | $8.00 | ±$0.00 |",
        "| `new` | create | — → 8 | — → $16.00 | +$16.00 |",
        "| `old` | **delete** | 4 → — | $8.00 → — | -$8.00 |",
        "| `unpriced` | in-place update | ? → 8 | ? | ? |",  # "?" either side: one "?"
        "",
    ]


def test_a_delta_needs_both_costs() -> None:
    (row,) = volume_table([_change(old_cost=None)], DESTRUCTIVE)[2:3]
    assert row.endswith("| ? → $16.00 | ? |")


def test_money_is_unmarked_unless_asked() -> None:
    assert (_money(1234.5), _money(None), _money(2.0, True)) == ("$1,234.50", "?", "$2.00†")


# --- what is lost ------------------------------------------------------------------------------


def test_what_a_deletion_and_a_replacement_lose() -> None:
    deleted = _change(action=Action.DELETE, exists=(True, False))
    assert (
        volume_loss(deleted)
        == "shared volume `ckpt` is **deleted**: its 4 TiB of checkpoints go with it"
    )
    replaced = _change(action=Action.REPLACE, replace_reasons=("region", "volume_name"))
    assert volume_loss(replaced) == (
        "shared volume `ckpt` is **replaced** (because of `region`, `volume_name`): the new volume "
        "starts empty and the old one's 4 TiB of checkpoints are deleted"
    )
    unsaid = _change(action=Action.REPLACE, old_size=None)
    assert volume_loss(unsaid) == (
        "shared volume `ckpt` is **replaced** (because of a field fixed at create): the new "
        "volume starts empty and the old one's ? TiB of checkpoints are deleted"
    )


# --- the notes on deleted clusters ----------------------------------------------------------


def _cluster(name: str, action: Action, volume_id: str | None = "vol-1") -> Any:
    """A cluster change as `attached_props` shapes it: by the attached kind's key, each property
    of the volume the cluster's inputs set (none when the cluster names no volume)."""
    attached = {"volumes": {"volume_id": volume_id}} if volume_id else {}
    return SimpleNamespace(name=name, action=action, attached=attached)


def test_each_gone_cluster_with_a_volume_gets_its_note_in_order() -> None:
    volumes = [
        _change(),
        _change(name="scratch", volume_id="vol-2", lifecycle_independent=False),
        _change(name="doomed", volume_id="vol-3", exists=(True, False)),
    ]
    clusters = [
        SimpleNamespace(name="bare", action=Action.DELETE),  # nothing attached at all
        _cluster("kept", Action.UPDATE),  # not gone: its volume is in use
        _cluster("novol", Action.DELETE, None),
        _cluster("both", Action.DELETE, "vol-3"),  # its volume goes in the same change
        _cluster("tmp", Action.DELETE, "vol-2"),
        _cluster("train", Action.DELETE),
        _cluster("tune", Action.REPLACE),
        _cluster("odd", Action.OTHER, "vol-7"),
    ]
    assert volume_notes(volumes, clusters, GONE, 2.0, "volumes", True) == [
        "Together deletes shared volume `scratch` with cluster `tmp` (it is not "
        "lifecycle-independent): its checkpoints go too.",
        "Shared volume `ckpt` outlives cluster `train`: storage keeps billing (≈ $8.00†/month) "
        "after the cluster is deleted, until the volume is deleted.",
        "Shared volume `ckpt` outlives cluster `tune`: storage keeps billing (≈ $8.00†/month) "
        "after the cluster is replaced, until the volume is deleted.",
        "Shared volume `vol-7` outlives cluster `odd`: storage keeps billing after the cluster "
        "is gone, until the volume is deleted.",
    ]


def test_a_note_without_a_rate_or_a_size_names_no_cost() -> None:
    clusters = [_cluster("train", Action.DELETE)]
    unmarked = volume_notes([_change()], clusters, GONE, 1.5, "volumes")
    assert "(≈ $6.00/month)" in unmarked[0]
    assert "≈" not in volume_notes([_change()], clusters, GONE, None, "volumes")[0]
    assert "≈" not in volume_notes([_change(old_size=None)], clusters, GONE, 2.0, "volumes")[0]


# --- the rate's note ---------------------------------------------------------------------------


def test_the_rate_note_word_for_word() -> None:
    tail = (
        "storage bills separately from GPU time and keeps billing after a cluster is deleted, "
        "until its volume is deleted."
    )
    assert (
        rate_note(0.5, "prices.json")
        == f"Shared-volume storage: $0.50 per TiB-month (prices.json); {tail}"
    )
    assert rate_note(0.5, "prices.json", True) == (
        "Shared-volume storage: $0.50† per TiB-month (a PLACEHOLDER rate of prices.json, not a "
        f"price list); {tail}"
    )
    assert rate_note(None, "prices.json") == (
        f"Shared-volume storage: no storage rate in the price table (prices.json); {tail}"
    )


# --- VolumePreview: what the comment asks of the kind -------------------------------------


def _plan(prices: PriceTable) -> StackPlan:
    return StackPlan("dev", "proj", "dev.json", {}, (), (), {}, prices)


TABLE = PriceTable(
    {}, "a test table", "2026-01-01", storage_per_tib_month=2.0, placeholder=True, file="p.json"
)


def _preview() -> VolumePreview:
    return VolumePreview(BY_TYPE[VOLUME_TYPE])


def test_the_kind_reads_its_steps_with_their_replace_reasons() -> None:
    step = {
        "op": "replace",
        "oldState": _state({"size_tib": 1}),
        "newState": _state({"size_tib": 1}),
        "replaceReasons": ["region"],
    }
    change = _preview().change("ckpt", [step], TABLE, "dev.json")
    assert (change.replace_reasons, change.old_cost, change.placeholder_price) == (
        ("region",),
        2.0,
        True,
    )
    same = {"op": "same", "oldState": _state({"size_tib": 3})}
    assert (
        _preview().change("ckpt", [same], TABLE, "dev.json").new_size == 3
    )  # unchanged: as it was


def test_the_kind_marks_placeholder_costs_under_its_table() -> None:
    lines = _preview().table([_change(placeholder_price=True)], _plan(TABLE), DESTRUCTIVE)
    assert (
        lines[-2].startswith("† computed from a placeholder rate of `p.json`") and lines[-1] == ""
    )
    assert _preview().table([_change()], _plan(TABLE), DESTRUCTIVE)[-2].startswith("| `ckpt`")


def test_the_kind_notes_use_the_plans_rate_and_placeholder() -> None:
    notes = _preview().callouts([_change()], [_cluster("train", Action.DELETE)], GONE, _plan(TABLE))
    assert "(≈ $8.00†/month)" in notes[0]
    (note,) = _preview().notes([_change()], _plan(TABLE))
    assert note.startswith(
        "Shared-volume storage: $2.00† per TiB-month (a PLACEHOLDER rate of `p.json`, as of "
        "2026-01-01"
    )
    plain = replace(TABLE, placeholder=False, file="")
    (note,) = _preview().notes([_change()], _plan(plain))
    assert note.startswith(
        "Shared-volume storage: $2.00 per TiB-month (a test table, as of 2026-01-01)"
    )
    assert _preview().notes([], _plan(TABLE)) == []
