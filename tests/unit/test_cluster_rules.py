"""The Cluster rules: what check rejects and what diff plans (in place, replace, nothing)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from together.types.cluster_update_params import ClusterUpdateParams

from tests.specs import ENGINE_PROPS as BASE
from together_provider import docs
from together_provider.cluster.provider import ClusterProvider
from together_provider.cluster.rules import (
    FIELD_POLICIES,
    RULEBOOK,
    RULES,
    Plan,
    replacement_deletes_first,
)
from together_provider.cluster.table import CLUSTER
from together_provider.docs import policy_table_markdown
from together_provider.framework.schema import UNKNOWN, Failure, Policy

INPUT_FIELDS = CLUSTER.input_names

PRE: dict[str, Any] = BASE | {"num_gpus": 16.0, "num_preemptible_gpus": 8.0, "project_id": "proj"}
OUTPUT_ONLY: dict[str, Any] = {
    "__provider": "pickle",
    "cluster_id": "c-123",
    "status": "Ready",
    "allocated_preemptible_gpus": 0.0,
    "desired_preemptible_gpus": 8.0,
    "kube_config": "apiVersion: v1",
}
NEW_VALUES: dict[str, Any] = {  # a different value for every field that replaces the cluster
    "cluster_name": "train-v2",
    "region": "us-west-2",
    "gpu_type": "H200_SXM",
    "cuda_version": "12.8",
    "nvidia_driver_version": "570",
    "cluster_type": "SLURM",
    "billing_type": "RESERVED",
    "duration_days": 7,
    "project_id": "proj-2",
    "volume_id": "vol-1",
    "auto_scale": True,
    "auto_scale_max_gpus": 32,
    "nvidia_version_id": "nv-12.8-570",
    "reservation_start_time": "2027-01-01T00:00:00Z",
    "capacity_pool_id": "pool-2",
    "install_traefik": True,
    "oidc_config": {
        "client_id": "c",
        "issuer_url": "https://issuer.example",
        "username_claim": "sub",
        "username_prefix": "oidc:",
        "group_claim": "groups",
        "group_prefix": "oidc:",
    },
    "acceptance_tests_params": {"enabled": True},
    "slurm_image": "registry.example/slurm:24",
    "slurm_shm_size_gib": 64,
}
REPLACE_FIELDS = tuple(NEW_VALUES)


def without(key: str) -> dict[str, Any]:
    return {k: v for k, v in BASE.items() if k != key}


def outputs(inputs: dict[str, Any]) -> dict[str, Any]:
    """Previous outputs as the engine stores them: every input echoed, plus output-only fields."""
    return inputs | OUTPUT_ONLY


def failures_for(new: dict[str, Any], old: dict[str, Any] | None = None) -> list[Failure]:
    return RULEBOOK.validate("train", new, old)


def only(new: dict[str, Any], old: dict[str, Any] | None = None) -> Failure:
    failures = failures_for(new, old)
    assert len(failures) == 1, failures
    return failures[0]


# --- the policy table ------------------------------------------------------------------------


def test_every_input_field_has_exactly_one_policy() -> None:
    assert tuple(FIELD_POLICIES) == INPUT_FIELDS


def test_policies_match_what_together_can_change_in_place() -> None:
    by_policy = {p: {n for n, fp in FIELD_POLICIES.items() if fp is p} for p in Policy}
    # Together's update request (the pinned SDK's) is what changes in place, except
    # cluster_type (switching KUBERNETES/SLURM rebuilds the cluster: it replaces); and
    # max_preemptible_gpus is provider-only (never sent) yet in place: it may clamp the target.
    update_fields = set(ClusterUpdateParams.__annotations__) - {"cluster_type"}
    assert by_policy[Policy.IN_PLACE] == update_fields | {"max_preemptible_gpus"}
    assert by_policy[Policy.LOCAL] == {"ready_timeout_seconds", "adopt_cluster_id", "volume_region"}
    assert by_policy[Policy.REPLACE] == set(REPLACE_FIELDS)


def test_every_policy_and_rule_says_why() -> None:
    assert all(f.why and f.doc for f in CLUSTER.inputs)
    assert all(r.why and r.when and r.field in INPUT_FIELDS for r in RULES)


def test_policy_table_has_a_row_per_field_and_rule() -> None:
    table = policy_table_markdown()
    assert table.startswith("| Field | What happens | Why |\n|---|---|---|\n")
    assert len(table.splitlines()) == 2 + len(FIELD_POLICIES) + len(RULES) + 1
    assert "| `num_preemptible_gpus` | updates in place |" in table
    assert "| `gpu_type` | replaces the cluster |" in table
    assert all(line.count("|") == 4 for line in table.splitlines())


REFERENCE = Path(__file__).parents[2] / "docs" / "reference.md"


def test_reference_page_tables_match_the_field_table_and_the_rules() -> None:
    # No skip: a page without the markers fails here, as a stale table does.
    text = REFERENCE.read_text(encoding="utf-8")
    assert docs.render_into(text) == text, (
        "regenerate with: python -m together_provider.docs --write docs/reference.md"
    )


def test_a_page_without_markers_is_refused() -> None:
    with pytest.raises(ValueError, match="lacks the markers"):
        docs.render_into("# no tables here\n")


# --- validate: accepted ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "props",
    [
        BASE,
        PRE,
        BASE | {"num_gpus": 64, "cluster_type": "SLURM"},
        BASE | {"billing_type": "RESERVED", "duration_days": 90},
        BASE
        | {
            "billing_type": "SCHEDULED_CAPACITY",
            "volume_id": "vol-1",
            "reservation_start_time": "2027-01-01T00:00:00Z",
            "reservation_end_time": "2027-01-08T00:00:00+00:00",
        },
        BASE | {"adopt_cluster_id": "c-9", "ready_timeout_seconds": 60},
    ],
)
def test_valid_specs_pass(props: dict[str, Any]) -> None:
    assert failures_for(props) == []
    assert failures_for(props, {}) == []


@pytest.mark.parametrize("name", INPUT_FIELDS)
def test_an_unknown_value_is_never_rejected(name: str) -> None:
    assert failures_for(PRE | {name: UNKNOWN}, PRE) == []


def test_unknown_target_without_project_is_not_rejected() -> None:
    assert failures_for(BASE | {"num_preemptible_gpus": UNKNOWN}) == []


# --- validate: rejected ------------------------------------------------------------------------


def test_zero_standard_nodes_uses_the_house_message() -> None:
    assert only(BASE | {"num_gpus": 0}) == Failure(
        "num_gpus",
        "cluster 'train': num_gpus=0 leaves no standard node; Together needs at least one 8-GPU "
        "standard node (num_gpus >= 8)",
    )


def test_a_preemptible_target_alone_is_not_a_cluster() -> None:
    failure = only(PRE | {"num_gpus": 0})
    assert "num_gpus=0 leaves no standard node; a preemptible target alone" in failure.reason


def test_zero_standard_nodes_is_rejected_on_update_too() -> None:
    assert only(BASE | {"num_gpus": 0}, BASE).field == "num_gpus"


@pytest.mark.parametrize(
    ("name", "value", "fix"),
    [("num_gpus", 12, "use 8 or 16"), ("num_preemptible_gpus", 4, "use 8")],
)
def test_counts_must_be_multiples_of_eight(name: str, value: int, fix: str) -> None:
    failure = only(PRE | {name: value})
    assert failure.field == name
    assert f"{name}={value} is not a multiple of 8" in failure.reason
    assert fix in failure.reason


def test_converting_standard_to_preemptible_gives_the_safe_path() -> None:
    failure = only(PRE | {"num_gpus": 8, "num_preemptible_gpus": 16}, PRE)
    assert failure.field == "num_gpus"
    assert failure.reason.startswith(
        "cluster 'train': num_gpus 16 -> 8 with num_preemptible_gpus 8 -> 16 converts standard "
        "nodes to preemptible in one update; Together would accept it (adding nodes of one class "
        "while draining the other), but this provider refuses it as a safety policy: capacity "
        "drops while the new nodes provision."
    )
    assert "Raise num_preemptible_gpus to 16 first, then lower num_gpus to 8" in failure.reason
    assert failure.reason.endswith(
        "in a later update once work has drained, or replace the cluster (e.g. change cluster_name)"
    )


def test_converting_preemptible_to_standard_gives_the_safe_path() -> None:
    failure = only(PRE | {"num_gpus": 24, "num_preemptible_gpus": 0}, PRE)
    assert "converts preemptible nodes to standard" in failure.reason
    assert "Raise num_gpus to 24 first, then lower num_preemptible_gpus to 0" in failure.reason


@pytest.mark.parametrize(
    ("num_gpus", "target"),
    [(24, 16), (8, 0), (24, 8), (8, 8), (16, 0), (16, 16), (16, 8)],
)
def test_same_direction_or_single_count_changes_are_allowed(num_gpus: int, target: int) -> None:
    assert failures_for(PRE | {"num_gpus": num_gpus, "num_preemptible_gpus": target}, PRE) == []


@pytest.mark.parametrize(
    "change",
    [{"num_gpus": UNKNOWN}, {"num_preemptible_gpus": UNKNOWN}],
)
def test_conversion_rule_skips_unknown_counts(change: dict[str, Any]) -> None:
    new = PRE | {"num_gpus": 8, "num_preemptible_gpus": 16} | change
    assert failures_for(new, PRE) == []


@pytest.mark.parametrize(
    "change", [{"cluster_name": "train-v2"}, {"gpu_type": "H200_SXM"}, {"region": UNKNOWN}]
)
def test_conversion_is_allowed_when_the_cluster_is_replaced(change: dict[str, Any]) -> None:
    new = PRE | {"num_gpus": 8, "num_preemptible_gpus": 16} | change
    assert failures_for(new, PRE) == []


@pytest.mark.parametrize("old", [None, {}])
def test_conversion_rule_does_not_apply_on_create(old: dict[str, Any] | None) -> None:
    assert failures_for(PRE | {"num_gpus": 8, "num_preemptible_gpus": 16}, old) == []


def test_slurm_cannot_take_a_preemptible_target() -> None:
    failure = only(PRE | {"cluster_type": "SLURM"})
    assert failure.field == "num_preemptible_gpus"
    assert "num_preemptible_gpus=8 on a SLURM cluster" in failure.reason
    assert "Slurm clusters cannot use preemptible capacity yet" in failure.reason


def test_a_preemptible_target_needs_a_project() -> None:
    failure = only(BASE | {"num_preemptible_gpus": 8})
    assert failure.field == "project_id"
    assert "num_preemptible_gpus=8" in failure.reason
    assert "set project_id" in failure.reason


def test_an_existing_cluster_without_a_project_cannot_gain_a_preemptible_target() -> None:
    # The update path: old inputs exist (the stack-config path always validates with old=None).
    old = BASE | {"num_preemptible_gpus": 0}
    (failure,) = RULEBOOK.validate("train", BASE | {"num_preemptible_gpus": 8}, old)
    assert failure.field == "project_id"
    assert "num_preemptible_gpus=8" in failure.reason
    # And through the dynamic provider's check, which receives the stored inputs as olds.
    result = ClusterProvider().check(
        {**old, "__provider": "pickle"}, BASE | {"num_preemptible_gpus": 8.0}
    )
    assert [(f.property, f.reason) for f in result.failures] == [("project_id", failure.reason)]


def test_reserved_billing_needs_a_length() -> None:
    failure = only(BASE | {"billing_type": "RESERVED"})
    assert failure.field == "duration_days"
    assert "set duration_days between 1 and 90" in failure.reason


def test_a_length_without_reserved_billing_is_rejected() -> None:
    assert "remove duration_days" in only(BASE | {"duration_days": 7}).reason


def test_spec_failures_carry_the_resource_name() -> None:
    assert only(BASE | {"num_gpu": 8}) == Failure(
        "num_gpu", "cluster 'train': unknown property 'num_gpu'; did you mean 'num_gpus'?"
    )


def test_type_errors_do_not_hide_cross_field_rules() -> None:
    failures = failures_for(BASE | {"region": 3, "num_gpus": 0})
    assert [f.field for f in failures] == ["region", "num_gpus"]


BAD_SPECS: list[tuple[str, dict[str, Any], dict[str, Any] | None, str]] = [
    ("string count", BASE | {"num_gpus": "8"}, None, "num_gpus"),
    ("fractional count", BASE | {"num_gpus": 8.5}, None, "num_gpus"),
    ("bool count", BASE | {"num_gpus": True}, None, "num_gpus"),
    ("list count", BASE | {"num_gpus": [8]}, None, "num_gpus"),
    ("string target", PRE | {"num_preemptible_gpus": "8"}, None, "num_preemptible_gpus"),
    ("fractional target", PRE | {"num_preemptible_gpus": 7.9}, None, "num_preemptible_gpus"),
    ("negative count", BASE | {"num_gpus": -8}, None, "num_gpus"),
    ("negative target", PRE | {"num_preemptible_gpus": -8.0}, None, "num_preemptible_gpus"),
    ("count of 12", BASE | {"num_gpus": 12}, None, "num_gpus"),
    ("count of 20", BASE | {"num_gpus": 20.0}, None, "num_gpus"),
    ("target of 4", PRE | {"num_preemptible_gpus": 4}, None, "num_preemptible_gpus"),
    ("zero standard", BASE | {"num_gpus": 0}, None, "num_gpus"),
    ("four standard", BASE | {"num_gpus": 4}, None, "num_gpus"),
    ("preemptible only", PRE | {"num_gpus": 0}, None, "num_gpus"),
    ("scale standard to zero", BASE | {"num_gpus": 0}, BASE, "num_gpus"),
    ("standard -> preemptible", PRE | {"num_gpus": 8, "num_preemptible_gpus": 16}, PRE, "num_gpus"),
    ("preemptible -> standard", PRE | {"num_gpus": 24, "num_preemptible_gpus": 0}, PRE, "num_gpus"),
    ("all to preemptible", PRE | {"num_gpus": 0, "num_preemptible_gpus": 24}, PRE, "num_gpus"),
    ("slurm with target", PRE | {"cluster_type": "SLURM"}, None, "num_preemptible_gpus"),
    ("target without project", BASE | {"num_preemptible_gpus": 8}, None, "project_id"),
    ("empty project", BASE | {"num_preemptible_gpus": 8, "project_id": ""}, None, "project_id"),
    ("unknown gpu type", BASE | {"gpu_type": "A100"}, None, "gpu_type"),
    ("lower-case gpu type", BASE | {"gpu_type": "h100_sxm"}, None, "gpu_type"),
    ("unknown cluster type", BASE | {"cluster_type": "K8S"}, None, "cluster_type"),
    ("unknown billing", BASE | {"billing_type": "SPOT"}, None, "billing_type"),
    ("reserved without days", BASE | {"billing_type": "RESERVED"}, None, "duration_days"),
    ("days without reserved", BASE | {"duration_days": 3}, None, "duration_days"),
    (
        "reserved for 91 days",
        BASE | {"billing_type": "RESERVED", "duration_days": 91},
        None,
        "duration_days",
    ),
    ("zero timeout", BASE | {"ready_timeout_seconds": 0}, None, "ready_timeout_seconds"),
    ("negative timeout", BASE | {"ready_timeout_seconds": -1.5}, None, "ready_timeout_seconds"),
    ("missing name", without("cluster_name"), None, "cluster_name"),
    ("missing gpu type", without("gpu_type"), None, "gpu_type"),
    ("missing count", without("num_gpus"), None, "num_gpus"),
    ("missing cuda", without("cuda_version"), None, "cuda_version"),
    ("typo num_gpu", BASE | {"num_gpu": 8}, None, "num_gpu"),
    ("typo preemptible", PRE | {"num_preemptable_gpus": 8}, None, "num_preemptable_gpus"),
    ("numeric region", BASE | {"region": 8}, None, "region"),
    ("empty name", BASE | {"cluster_name": ""}, None, "cluster_name"),
]


@pytest.mark.parametrize(
    ("new", "old", "field"), [case[1:] for case in BAD_SPECS], ids=[case[0] for case in BAD_SPECS]
)
def test_bad_spec_names_the_right_field(
    new: dict[str, Any], old: dict[str, Any] | None, field: str
) -> None:
    failures = failures_for(new, old)
    assert field in [f.field for f in failures]
    assert all(f.reason.startswith("cluster 'train': ") for f in failures)
    assert any(field in f.reason for f in failures)


def test_the_bad_spec_corpus_is_large_enough() -> None:
    assert len(BAD_SPECS) >= 30


# --- check_inputs ------------------------------------------------------------------------------


def test_check_inputs_returns_normalised_plain_inputs() -> None:
    inputs, failures = RULEBOOK.check_inputs("train", PRE | {"__provider": "pickle"}, None)
    assert failures == []
    assert inputs["num_gpus"] == 16
    assert type(inputs["num_gpus"]) is int
    assert inputs["cluster_type"] == "KUBERNETES"
    assert "__provider" not in inputs


def test_check_inputs_echoes_raw_inputs_on_failure() -> None:
    inputs, failures = RULEBOOK.check_inputs("train", BASE | {"num_gpus": "8"}, None)
    assert inputs["num_gpus"] == "8"
    assert [f.field for f in failures] == ["num_gpus"]


# --- plan ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new"),
    [
        pytest.param(outputs(PRE), PRE, id="nothing changed"),
        pytest.param(outputs(PRE), PRE | {"num_gpus": 16, "num_preemptible_gpus": 8}, id="8.0==8"),
        pytest.param(
            outputs(BASE), BASE | {"num_preemptible_gpus": 0}, id="default absent from old"
        ),
        pytest.param(
            outputs(PRE) | {"allocated_preemptible_gpus": 0.0, "status": "Provisioning"},
            PRE,
            id="allocated below the target",
        ),
    ],
)
def test_no_diff(old: dict[str, Any], new: dict[str, Any]) -> None:
    assert RULEBOOK.plan(old, new) == Plan()
    assert not RULEBOOK.plan(old, new).has_changes


def test_raising_the_preemptible_target_updates_in_place() -> None:
    result = RULEBOOK.plan(outputs(PRE), PRE | {"num_preemptible_gpus": 16.0})
    assert result == Plan(changed=("num_preemptible_gpus",), update={"num_preemptible_gpus": 16})
    assert type(result.update["num_preemptible_gpus"]) is int


def test_scaling_standard_gpus_updates_in_place() -> None:
    result = RULEBOOK.plan(outputs(PRE), PRE | {"num_gpus": 24})
    assert result == Plan(changed=("num_gpus",), update={"num_gpus": 24})


def test_both_counts_up_send_both_fields() -> None:
    result = RULEBOOK.plan(outputs(PRE), PRE | {"num_gpus": 24, "num_preemptible_gpus": 16})
    assert result.update == {"num_gpus": 24, "num_preemptible_gpus": 16}
    assert result.replaces == ()


@pytest.mark.parametrize("name", REPLACE_FIELDS)
def test_changing_a_replace_field_replaces_the_cluster(name: str) -> None:
    result = RULEBOOK.plan(outputs(BASE), BASE | {name: NEW_VALUES[name]})
    assert name in result.changed
    assert name in result.replaces
    assert result.update == {}


@pytest.mark.parametrize("name", REPLACE_FIELDS)
def test_an_unknown_replace_field_is_conservatively_a_replacement(name: str) -> None:
    result = RULEBOOK.plan(outputs(BASE), BASE | {name: UNKNOWN})
    assert result.replaces == (name,)


def test_an_unknown_count_is_an_in_place_change_with_nothing_to_send_yet() -> None:
    result = RULEBOOK.plan(outputs(PRE), PRE | {"num_preemptible_gpus": UNKNOWN})
    assert result == Plan(changed=("num_preemptible_gpus",))


@pytest.mark.parametrize("change", [{"ready_timeout_seconds": 60}, {"adopt_cluster_id": "c-9"}])
def test_provider_only_fields_change_without_an_api_call(change: dict[str, Any]) -> None:
    result = RULEBOOK.plan(outputs(BASE), BASE | change)
    assert result == Plan(changed=tuple(change))


def test_removing_an_optional_replace_field_replaces() -> None:
    old = outputs(BASE | {"volume_id": "vol-1"})
    assert RULEBOOK.plan(old, BASE).replaces == ("volume_id",)


def test_a_replace_field_missing_from_old_state_does_not_replace() -> None:
    old = {k: v for k, v in outputs(BASE).items() if k != "gpu_type"}
    result = RULEBOOK.plan(old, BASE)
    assert result.changed == ("gpu_type",)
    assert result.replaces == ()


def test_same_name_replacement_deletes_first() -> None:
    assert RULEBOOK.plan(outputs(BASE), BASE | {"gpu_type": "H200_SXM"}).delete_before_replace


def test_renamed_replacement_creates_first() -> None:
    result = RULEBOOK.plan(
        outputs(BASE), BASE | {"cluster_name": "train-v2", "gpu_type": "H200_SXM"}
    )
    assert result.replaces == ("cluster_name", "gpu_type")
    assert not result.delete_before_replace


def test_unknown_name_replacement_deletes_first() -> None:
    assert RULEBOOK.plan(outputs(BASE), BASE | {"cluster_name": UNKNOWN}).delete_before_replace


def test_in_place_update_never_asks_for_delete_first() -> None:
    assert not RULEBOOK.plan(outputs(PRE), PRE | {"num_gpus": 24}).delete_before_replace


def test_changed_fields_follow_the_policy_table_order() -> None:
    new = BASE | {"volume_id": "v", "num_gpus": 16, "region": "us-west-2"}
    assert RULEBOOK.plan(outputs(BASE), new).changed == ("region", "num_gpus", "volume_id")


# --- whole messages: a user reads every word of a rejection, so every word is asserted ---------


@pytest.mark.parametrize(
    ("change", "field", "reason"),
    [
        (
            {"auto_scale": True},
            "auto_scale_max_gpus",
            "auto_scale is true but auto_scale_max_gpus is not set; Together scales between "
            "num_gpus and auto_scale_max_gpus (set auto_scale_max_gpus, a multiple of 8 >= "
            "num_gpus)",
        ),
        (
            {"auto_scale_max_gpus": 16},
            "auto_scale_max_gpus",
            "auto_scale_max_gpus=16 without auto_scale; the ceiling only means something to "
            "Together's autoscaler (set auto_scale=true, or remove auto_scale_max_gpus)",
        ),
        (
            {"billing_type": "RESERVED"},
            "duration_days",
            "duration_days is not set but billing_type='RESERVED'; a reservation needs a length "
            "(set duration_days between 1 and 90)",
        ),
        (
            {"duration_days": 7},
            "duration_days",
            "duration_days=7 with billing_type='ON_DEMAND'; only RESERVED clusters have a length "
            "(remove duration_days or set billing_type='RESERVED')",
        ),
        (
            {"num_gpus": 12},
            "num_gpus",
            "num_gpus=12 is not a multiple of 8; Together nodes have 8 GPUs each (use 8 or 16)",
        ),
        (
            {"num_gpus": 8, "auto_scale": True, "auto_scale_max_gpus": 20},
            "auto_scale_max_gpus",
            "auto_scale_max_gpus=20 is not a multiple of 8; Together nodes have 8 GPUs each "
            "(use 16 or 24)",
        ),
        (
            {"num_gpus": 16, "auto_scale": True, "auto_scale_max_gpus": 8},
            "auto_scale_max_gpus",
            "auto_scale_max_gpus=8 is below num_gpus=16, the floor of the range; set "
            "auto_scale_max_gpus to at least 16 (a multiple of 8), or set auto_scale=false and "
            "remove auto_scale_max_gpus",
        ),
        (
            {"num_preemptible_gpus": 16, "max_preemptible_gpus": 8, "project_id": "p"},
            "max_preemptible_gpus",
            "max_preemptible_gpus=8 is below num_preemptible_gpus=16, the floor of the range; set "
            "max_preemptible_gpus to at least 16 (a multiple of 8), or remove "
            "max_preemptible_gpus to hold the target at num_preemptible_gpus",
        ),
        (
            {"max_preemptible_gpus": 16, "project_id": "p", "cluster_type": "SLURM"},
            "num_preemptible_gpus",
            "max_preemptible_gpus=16 on a SLURM cluster; Slurm clusters cannot use preemptible "
            "capacity yet (set max_preemptible_gpus=0 or cluster_type='KUBERNETES')",
        ),
    ],
)
def test_each_rejection_reads_in_full(change: dict[str, Any], field: str, reason: str) -> None:
    assert only(BASE | {"billing_type": "ON_DEMAND"} | change) == Failure(
        field, f"cluster 'train': {reason}"
    )


def test_a_preemptible_ceiling_without_a_project_names_the_field_to_zero() -> None:
    failure = only(BASE | {"max_preemptible_gpus": 16})
    assert failure.field == "project_id"
    assert failure.reason.endswith("(set project_id, or max_preemptible_gpus=0)")


@pytest.mark.parametrize(
    "change",
    [
        {"num_preemptible_gpus": 0, "max_preemptible_gpus": 16},  # a range from 0 is an ask too
        {"num_preemptible_gpus": 8, "max_preemptible_gpus": 0},
    ],
)
def test_the_largest_preemptible_ask_is_the_one_named(change: dict[str, Any]) -> None:
    (failure,) = [f for f in failures_for(BASE | change) if f.field == "project_id"]
    name = "max_preemptible_gpus" if change["max_preemptible_gpus"] else "num_preemptible_gpus"
    value = max(change.values())
    assert failure.reason == (
        f"cluster 'train': project_id is not set but {name}={value}; Together requires a project "
        f"for a preemptible target (set project_id, or {name}=0)"
    )


def test_a_count_below_one_node_is_reported_once_and_other_counts_each_by_its_own_rule() -> None:
    # num_gpus=4 is the standard-node rule's alone; a preemptible target of 4 is not a multiple.
    assert [f.field for f in failures_for(PRE | {"num_gpus": 4})] == ["num_gpus"]
    target = failures_for(PRE | {"num_preemptible_gpus": 4})
    assert [f.field for f in target] == ["num_preemptible_gpus"]
    assert target[0].reason.endswith("(use 8)")
    ceiling = failures_for(PRE | {"max_preemptible_gpus": 4})
    assert [f.field for f in ceiling] == ["max_preemptible_gpus"]  # not also below the floor
    assert failures_for(PRE | {"num_gpus": 8, "num_preemptible_gpus": 8}) == []


def test_a_single_preemptible_gpu_alone_is_still_no_cluster() -> None:
    assert (
        "a preemptible target alone"
        in failures_for(PRE | {"num_gpus": 0, "num_preemptible_gpus": 1})[0].reason
    )


def test_a_ceiling_equal_to_its_floor_is_a_range_of_one_value() -> None:
    assert failures_for(PRE | {"num_preemptible_gpus": 16, "max_preemptible_gpus": 16}) == []
    auto = BASE | {"num_gpus": 16, "auto_scale": True, "auto_scale_max_gpus": 16}
    assert failures_for(auto) == []


def test_an_unknown_bound_skips_the_range_rule() -> None:
    assert failures_for(PRE | {"max_preemptible_gpus": UNKNOWN}) == []
    assert failures_for(PRE | {"num_preemptible_gpus": UNKNOWN, "max_preemptible_gpus": 8}) == []


def test_raising_num_gpus_while_the_live_target_stays_inside_its_range_is_no_conversion() -> None:
    """The conversion rule compares what would be PUT: a lowered floor leaves the live target of
    24 where it is (inside [16, 32]), so raising num_gpus converts nothing."""
    old = PRE | {"num_preemptible_gpus": 24, "max_preemptible_gpus": 32}
    new = old | {"num_gpus": 24, "num_preemptible_gpus": 16}
    assert failures_for(new, old) == []


def test_the_replacement_order_for_the_preview_follows_the_name() -> None:
    assert replacement_deletes_first({"cluster_name": "a"}, {"cluster_name": "a"})
    assert not replacement_deletes_first({"cluster_name": "a"}, {"cluster_name": "b"})
    assert replacement_deletes_first({"cluster_name": "a"}, {"cluster_name": UNKNOWN})
    assert not replacement_deletes_first({"cluster_name": UNKNOWN}, {"cluster_name": "a"})


def test_a_single_preemptible_gpu_is_still_a_preemptible_ask() -> None:
    reasons = [
        f.reason for f in failures_for(PRE | {"cluster_type": "SLURM", "num_preemptible_gpus": 1})
    ]
    assert any("num_preemptible_gpus=1 on a SLURM cluster" in r for r in reasons), reasons
