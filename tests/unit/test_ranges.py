"""Declared ranges: `max_preemptible_gpus` over the preemptible target, Together's `auto_scale`
over `num_gpus`. Inside the range the live value is never a change; outside it, one in-place
update to the nearest bound; a bad ceiling is refused at check."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from tests.specs import ENGINE_PROPS as BASE
from together_provider.cluster.rules import RULEBOOK, RULES, Plan
from together_provider.cluster.table import CLUSTER
from together_provider.framework.rulebook import Rulebook, wanted

RANGE: dict[str, Any] = BASE | {
    "num_preemptible_gpus": 8,
    "max_preemptible_gpus": 32,
    "project_id": "proj",
}
AUTO: dict[str, Any] = BASE | {"num_gpus": 8, "auto_scale": True, "auto_scale_max_gpus": 32}


def live(inputs: dict[str, Any], **now: int) -> dict[str, Any]:
    """Previous outputs after a refresh: the inputs echoed with the live counts read back."""
    return inputs | now | {"cluster_id": "c-1", "status": "Ready", "allocated_preemptible_gpus": 8}


@pytest.mark.parametrize("target", [8, 16, 24, 32])
def test_a_live_target_inside_the_range_is_no_change(target: int) -> None:
    assert RULEBOOK.plan(live(RANGE, num_preemptible_gpus=target), RANGE) == Plan()


@pytest.mark.parametrize(("target", "put"), [(40, 32), (48, 32), (0, 8)])
def test_a_live_target_outside_goes_to_the_nearest_bound_in_place(target: int, put: int) -> None:
    result = RULEBOOK.plan(live(RANGE, num_preemptible_gpus=target), RANGE)
    assert result == Plan(changed=("num_preemptible_gpus",), update={"num_preemptible_gpus": put})


def test_without_a_ceiling_the_target_is_held_at_the_declared_value() -> None:
    fixed = RANGE | {"max_preemptible_gpus": None}
    assert RULEBOOK.plan(live(fixed, num_preemptible_gpus=24), fixed).update == {
        "num_preemptible_gpus": 8
    }


@pytest.mark.parametrize(
    ("change", "update"),
    [
        ({"max_preemptible_gpus": 24}, {}),  # the live 24 stays inside: nothing to PUT
        ({"max_preemptible_gpus": 16}, {"num_preemptible_gpus": 16}),  # clamped to the new ceiling
        ({"num_preemptible_gpus": 32}, {"num_preemptible_gpus": 32}),  # the floor passes it
        ({"num_preemptible_gpus": 16}, {}),  # a new floor still below the live 24
        ({"max_preemptible_gpus": None}, {"num_preemptible_gpus": 8}),  # back to a fixed target
    ],
)
def test_moving_a_bound_puts_only_what_the_live_target_needs(
    change: dict[str, Any], update: dict[str, int]
) -> None:
    old = live(RANGE, num_preemptible_gpus=24)
    assert RULEBOOK.plan(old, RANGE | change).update == update
    assert RULEBOOK.plan(old, RANGE | change).replaces == ()


@pytest.mark.parametrize(
    ("ceiling", "says"),
    [
        (20, "max_preemptible_gpus=20 is not a multiple of 8; Together nodes have 8 GPUs each "
             "(use 16 or 24)"),
        (4, "max_preemptible_gpus=4 is not a multiple of 8"),
        (0, "max_preemptible_gpus=0 is below num_preemptible_gpus=8, the floor of the range; set "
            "max_preemptible_gpus to at least 8"),
    ],
)  # fmt: skip
def test_a_bad_ceiling_is_refused_naming_it_and_the_fix(ceiling: int, says: str) -> None:
    failures = RULEBOOK.validate("train", RANGE | {"max_preemptible_gpus": ceiling}, None)
    assert [f.field for f in failures] == ["max_preemptible_gpus"]
    assert failures[0].reason.startswith(f"cluster 'train': {says}")


def test_a_ceiling_below_a_raised_floor_is_refused() -> None:
    [failure] = RULEBOOK.validate("train", RANGE | {"num_preemptible_gpus": 40}, RANGE)
    assert failure.field == "max_preemptible_gpus"
    assert "remove max_preemptible_gpus to hold the target" in failure.reason


def test_a_preemptible_ceiling_needs_a_project_and_kubernetes() -> None:
    floorless = RANGE | {"num_preemptible_gpus": 0, "project_id": None}
    [failure] = RULEBOOK.validate("train", floorless, None)
    assert failure.field == "project_id" and "max_preemptible_gpus=32" in failure.reason
    [failure] = RULEBOOK.validate("train", RANGE | {"cluster_type": "SLURM"}, None)
    assert "max_preemptible_gpus=32 on a SLURM cluster" in failure.reason


@pytest.mark.parametrize("standard", [8, 16, 32])
def test_a_live_num_gpus_inside_auto_scale_is_not_drift(standard: int) -> None:
    assert RULEBOOK.plan(live(AUTO, num_gpus=standard), AUTO) == Plan()


def test_a_live_num_gpus_outside_auto_scale_goes_to_the_nearest_bound() -> None:
    assert RULEBOOK.plan(live(AUTO, num_gpus=40), AUTO).update == {"num_gpus": 32}


@pytest.mark.parametrize(
    ("change", "field", "says"),
    [
        ({"auto_scale_max_gpus": None}, "auto_scale_max_gpus", "auto_scale is true but"),
        ({"auto_scale": False}, "auto_scale_max_gpus", "auto_scale_max_gpus=32 without auto_scale"),
        ({"auto_scale_max_gpus": 12}, "auto_scale_max_gpus", "is not a multiple of 8"),
        ({"num_gpus": 40}, "auto_scale_max_gpus", "auto_scale_max_gpus=32 is below num_gpus=40"),
    ],
)
def test_auto_scale_needs_a_ceiling_of_whole_nodes_above_num_gpus(
    change: dict[str, Any], field: str, says: str
) -> None:
    [failure] = RULEBOOK.validate("train", AUTO | change, None)
    assert failure.field == field and says in failure.reason


@pytest.mark.parametrize("name", ["auto_scale", "auto_scale_max_gpus"])
def test_auto_scale_settings_are_create_only(name: str) -> None:
    change = {"auto_scale_max_gpus": 48} if name == "auto_scale_max_gpus" else {"auto_scale": False}
    result = RULEBOOK.plan(live(AUTO), AUTO | change)
    assert result.replaces == (name,) and result.update == {}


def test_raising_the_preemptible_target_with_autoscaled_standard_nodes_is_no_conversion() -> None:
    """The live num_gpus 24 stays (inside auto_scale): raising the target converts nothing."""
    both = AUTO | {"num_preemptible_gpus": 8, "project_id": "proj"}
    old = live(both, num_gpus=24)
    assert RULEBOOK.validate("train", both | {"num_preemptible_gpus": 16}, old) == []
    assert RULEBOOK.plan(old, both | {"num_preemptible_gpus": 16}).update == {
        "num_preemptible_gpus": 16
    }


def test_the_outputs_echo_the_live_value_of_a_floor_whose_ceiling_is_set() -> None:
    cluster = SimpleNamespace(desired_preemptible_gpus=24, num_gpus=16)
    assert CLUSTER.with_live_ranges(RANGE, cluster)["num_preemptible_gpus"] == 24
    assert CLUSTER.with_live_ranges(AUTO, cluster)["num_gpus"] == 16
    fixed = RANGE | {"max_preemptible_gpus": None}
    assert CLUSTER.with_live_ranges(fixed, cluster)["num_preemptible_gpus"] == 8


def test_a_live_value_that_is_not_a_count_is_as_good_as_unknown() -> None:
    """Older state may hold no live count, or a boolean where a count belongs: the floor is
    wanted, never `min(max(True, ...))`."""
    old = CLUSTER.parse(RANGE)[0]
    for live_value in (True, None, "24"):
        vars(old)["num_preemptible_gpus"] = live_value
        assert (
            wanted(
                CLUSTER,
                old,
                CLUSTER.parse(RANGE | {"num_preemptible_gpus": 16})[0],
                "num_preemptible_gpus",
            )
            == 16
        )


def test_a_replacement_puts_nothing_even_when_a_count_changes_too() -> None:
    new = RANGE | {"gpu_type": "H200_SXM", "num_gpus": 16}
    result = RULEBOOK.plan(live(RANGE, num_preemptible_gpus=8), new)
    assert result.replaces == ("gpu_type",) and "num_gpus" in result.changed
    assert result.update == {}


def test_a_rulebook_is_its_table_its_rules_and_its_name_field() -> None:
    """Built anew (not the module's): each part a Rulebook is given is the one it uses."""
    book = Rulebook(CLUSTER, RULES[:1], name_field="cluster_name")
    assert book.schema is CLUSTER and book.rules == RULES[:1]
    assert [
        f.reason for f in book.validate("t", BASE | {"num_gpus": 0, "num_gpus_x": 1}, None)
    ] == [
        "cluster 't': unknown property 'num_gpus_x'; did you mean 'num_gpus'?",
        "cluster 't': num_gpus=0 leaves no standard node; Together needs at least one 8-GPU "
        "standard node (num_gpus >= 8)",
    ]
    assert book.check_resource({}, RANGE | {"num_gpus": 0.0})[1][0].reason.startswith(
        "cluster 'train': "
    )
    # Without a deletes-first rule a replacement creates first.
    replaced = book.plan(live(RANGE), RANGE | {"cluster_name": "train", "gpu_type": "H200_SXM"})
    assert replaced.replaces == ("gpu_type",) and not replaced.delete_before_replace
    spec = CLUSTER.parse(BASE | {"num_gpus": 0})[0]
    assert [f.reason for f in book.failures("adopted", spec, None)] == [
        "cluster 'adopted': num_gpus=0 leaves no standard node; Together needs at least one "
        "8-GPU standard node (num_gpus >= 8)"
    ]


def test_adoption_failures_weigh_the_live_cluster_too() -> None:
    """What adoption refuses compares the spec with the live cluster: a conversion of node
    classes is only one against what is live."""
    live_spec = CLUSTER.parse(RANGE | {"num_gpus": 16, "max_preemptible_gpus": None})[0]
    spec = CLUSTER.parse(RANGE | {"num_gpus": 8, "num_preemptible_gpus": 16})[0]
    (failure,) = RULEBOOK.failures("adopted", spec, live_spec)
    assert failure.reason.startswith(
        "cluster 'adopted': num_gpus 16 -> 8 with num_preemptible_gpus 8 -> 16 converts"
    )
    assert RULEBOOK.failures("adopted", spec, None) == []
