"""The plan's derived facts (`plan_outcome`, `lists_unchanged`, `merge`) on plans built by hand:
what the engine's op names mean, and when a preview listed unchanged resources. They were
properties mutmut skipped until they became plain functions (issue 51)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from together_facts.prices import PriceTable
from together_provider.preview.plan import Outcome, StackPlan, lists_unchanged, plan_outcome
from together_provider.preview_parts.steps import Action, merge

PRICES = PriceTable({}, "none", "2026-01-01")


def _plan(*actions: Action, summary: dict[str, int] | None = None) -> StackPlan:
    changes: Any = tuple(SimpleNamespace(action=a, name="x") for a in actions)
    return StackPlan("dev", "p", "dev.json", {"clusters": changes}, (), (), summary or {}, PRICES)


def test_a_preview_lists_unchanged_resources_only_when_one_is_unchanged() -> None:
    assert lists_unchanged(_plan(Action.SAME, Action.UPDATE))
    assert not lists_unchanged(_plan(Action.UPDATE, Action.CREATE))
    assert not lists_unchanged(_plan())


@pytest.mark.parametrize("op", ["replace", "create-replacement", "delete-replaced", "delete"])
def test_another_resources_replacement_or_deletion_in_the_summary_is_a_replacement(op: str) -> None:
    assert plan_outcome(_plan(summary={op: 1, "same": 3})) is Outcome.REPLACEMENT


def test_a_summary_of_only_unchanged_resources_is_no_change() -> None:
    assert plan_outcome(_plan(Action.SAME, summary={"same": 3, "update": 0})) is Outcome.NO_CHANGES
    assert plan_outcome(_plan(summary={"create": 1})) is Outcome.CHANGES


@pytest.mark.parametrize(
    ("ops", "action"),
    [
        (["same"], Action.SAME),
        (["read"], Action.SAME),
        (["refresh", "same"], Action.SAME),
        (["create-replacement"], Action.REPLACE),
        (["delete-replaced", "replace", "create-replacement"], Action.REPLACE),
        (["import"], Action.OTHER),
    ],
)
def test_what_each_engine_op_means(ops: list[str], action: Action) -> None:
    steps = [{"op": op, "oldState": {"o": 1}, "newState": {"n": 1}} for op in ops]
    assert merge(steps)[1] is action
