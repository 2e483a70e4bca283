"""A cluster's counts are read once, by its table: the rules, the PR preview and the policy pack
agree on what a raw property holds, so 8.5 GPUs is no count to any of them (never 8)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.specs import CLUSTER_SPEC
from together_policy import clusters as policy_clusters
from together_policy.provider import CLUSTER_TYPE, Unknown
from together_policy.resources import Res, has_preemptible_capacity, preemptible_target
from together_provider.cluster.rules import RULEBOOK
from together_provider.cluster.table import counts
from together_provider.framework.schema import UNKNOWN, Span
from together_provider.preview import build_plan, load_price_table

PROJECT = "together-gpu-clusters"
SPEC = {**CLUSTER_SPEC, "cluster_name": "train", "num_preemptible_gpus": 8}


def _previewed(props: dict[str, Any]) -> Any:
    """The cluster's change as the PR comment reads it from a `pulumi preview --json` step."""
    urn = f"urn:pulumi:dev::{PROJECT}::pulumi:pulumi:Stack${CLUSTER_TYPE}::train"
    state = {"type": CLUSTER_TYPE, "inputs": {"__provider": "x", **props}, "outputs": {}}
    document = {
        "config": {f"{PROJECT}:clusters": "{}"},
        "steps": [{"op": "create", "urn": urn, "oldState": None, "newState": state}],
        "changeSummary": {"create": 1},
    }
    (change,) = build_plan(document, "dev.json", load_price_table()).changes["clusters"]
    return change


def _policy(props: dict[str, Any], name: str = "train") -> Res:
    return Res(CLUSTER_TYPE, f"urn:{name}", name, {"__provider": "x", **props})


@pytest.mark.parametrize("field", ["num_gpus", "num_preemptible_gpus"])
def test_a_fractional_count_is_no_count_to_the_rules_the_preview_and_the_policy(
    field: str,
) -> None:
    props = {**SPEC, field: 8.5}
    # The rules reject it, naming the field.
    failures = RULEBOOK.check_resource({}, props)[1]
    assert [f.field for f in failures if "8.5" in f.reason] == [field]
    # The preview prices no cluster of 8.5 GPUs (unknown cost), rather than one of 8.
    change = _previewed(props)
    assert change.new_cost is None
    assert (change.new.standard, change.new.preemptible)[field == "num_preemptible_gpus"] is None
    # The policy counts it as unknown: left out of the budget (named), never as 8.
    stack = [_policy({**SPEC, "num_gpus": 16}, "ok"), _policy(props, "bad")]
    (found,) = policy_clusters.budget(stack, policy_clusters.Budget(max_standard_gpus=8))
    assert "num_gpus=16 standard GPUs in total" in found.message
    assert "not counted (unknown until apply): bad" in found.message
    if field == "num_preemptible_gpus":
        assert preemptible_target(_policy(props)) is None
        assert has_preemptible_capacity(_policy(props))  # unknown: not ruled out


def test_whole_counts_read_the_same_everywhere() -> None:
    props = {**SPEC, "num_gpus": 16.0, "num_preemptible_gpus": 8, "max_preemptible_gpus": 32}
    assert counts(props).standard == Span(16, None, ranged=False)
    assert counts(props).preemptible == Span(8, 32, ranged=True)
    change = _previewed(props)
    assert (change.new.standard, change.new.preemptible, change.new.preemptible_max) == (16, 8, 32)
    assert preemptible_target(_policy(props)) == 8
    assert not RULEBOOK.check_resource({}, props)[1]


def test_a_range_whose_ceiling_is_unknown_reaches_an_unknown_top() -> None:
    span = counts({**SPEC, "max_preemptible_gpus": UNKNOWN}).preemptible
    assert span == Span(8, None, ranged=True) and span.top is None
    policy_span = counts({**SPEC, "max_preemptible_gpus": Unknown.VALUE}).preemptible
    assert policy_span == span
    assert counts({**SPEC, "num_preemptible_gpus": 0}).preemptible.top == 0
