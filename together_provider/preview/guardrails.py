"""Cost guardrails: a PR that raises a stack's cost past a threshold is blocked, because a
reviewer skims a comment but a required check does not. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from together_provider.framework.kind import Kind
from together_provider.preview.kinds import preview_of


class StackPlan(Protocol):
    """What a guardrail reads of a `plan.StackPlan` (its own type here, so that the plan, which
    holds the breaches, and the guardrails import one way)."""

    def kinds(self) -> list[tuple[Kind, tuple[Any, ...]]]: ...


HOURS_PER_MONTH = 730


@dataclass(frozen=True)
class GuardrailBreach:
    """One threshold a stack's change crosses: the flag, its limit and the increase, in USD."""

    flag: str
    period: str
    limit: float
    increase: float

    @property
    def excess(self) -> float:
        return self.increase - self.limit

    def describe(self) -> str:
        return (
            f"the cost rises by ${self.increase:,.2f}/{self.period}, over the `{self.flag}` "
            f"threshold of ${self.limit:,.2f}/{self.period} by ${self.excess:,.2f}"
        )


def _known_delta(changes: Sequence[object]) -> float:
    """The comment's own cost delta; a change whose size is only known after apply counts as
    zero (the comment says so)."""
    total = 0.0
    for change in changes:
        old, new = getattr(change, "old_cost", None), getattr(change, "new_cost", None)
        if old is not None and new is not None:
            total += new - old
    return total


def _kinds_delta(plan: StackPlan, per_hour: bool) -> float:
    return sum(
        _known_delta(changes)
        for kind, changes in plan.kinds()
        if preview_of(kind).per_hour is per_hour
    )


def hourly_increase(plan: StackPlan) -> float:
    """The cost delta of the kinds billed per hour (clusters), in USD per hour (unknown sizes
    left out)."""
    return _kinds_delta(plan, per_hour=True)


def monthly_increase(plan: StackPlan) -> float:
    """The hourly delta over a 730-hour month plus the monthly-billed kinds' delta (storage)."""
    return hourly_increase(plan) * HOURS_PER_MONTH + _kinds_delta(plan, per_hour=False)


def breaches(
    plan: StackPlan, max_hourly: float | None, max_monthly: float | None
) -> tuple[GuardrailBreach, ...]:
    """The thresholds ``plan`` crosses (an increase strictly above the limit).

    Like Infracost's guardrails, the threshold is on the increase, not the total: routine PRs
    pass, and the one that doubles the GPU bill stops.
    """
    found = []
    if max_hourly is not None and (rise := hourly_increase(plan)) > max_hourly + 1e-9:
        found.append(GuardrailBreach("--max-hourly-increase", "h", max_hourly, rise))
    if max_monthly is not None and (rise := monthly_increase(plan)) > max_monthly + 1e-9:
        found.append(GuardrailBreach("--max-monthly-increase", "month", max_monthly, rise))
    return tuple(found)


def guardrail_lines(found: Sequence[GuardrailBreach]) -> list[str]:
    """The comment's blocking callout for crossed thresholds."""
    if not found:
        return []
    return [
        "> [!CAUTION]",
        f"> **Blocked by {len(found)} cost guardrail(s):** the PR raises the cost past a "
        "threshold its workflow sets.",
        *(f"> - {breach.describe()}" for breach in found),
        "",
    ]
