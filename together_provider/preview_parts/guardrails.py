"""Cost guardrails: a PR that raises a stack's cost past a threshold is blocked, because a
reviewer skims a comment but a required check does not. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from together_provider.framework.kind import Kind
from together_provider.preview_parts.kinds import preview_of
from together_provider.preview_parts.prices import PriceTable


class Priced(Protocol):
    """What the placeholder legend reads of a plan: kinds' previews call it with the plan they
    are given (`preview.kinds.StackPlan`)."""

    @property
    def project(self) -> str | None: ...

    @property
    def prices(self) -> PriceTable: ...


class StackPlan(Priced, Protocol):
    """What a guardrail reads of a `plan.StackPlan` (its own type here)."""

    def kinds(self) -> list[tuple[Kind, tuple[Any, ...]]]: ...


HOURS_PER_MONTH = 730
PLACEHOLDER_MARK = "†"
"""Follows every cost figure computed from a placeholder rate; the legend under it says so."""


@dataclass(frozen=True)
class GuardrailBreach:
    """One threshold a stack's change crosses: the flag, its limit and the increase, in USD."""

    flag: str
    period: str
    limit: float
    increase: float
    placeholder: bool = False
    """The increase is computed from placeholder rates (`PriceTable.placeholder`): it warns
    unless the stack opts in to blocking (`Verdict.blocking_guardrails`)."""

    @property
    def excess(self) -> float:
        return self.increase - self.limit

    def describe(self) -> str:
        mark = PLACEHOLDER_MARK if self.placeholder else ""
        return (
            f"the cost rises by ${self.increase:,.2f}{mark}/{self.period}, over the `{self.flag}` "
            f"threshold of ${self.limit:,.2f}/{self.period} by ${self.excess:,.2f}{mark}"
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


def _on_placeholder(plan: StackPlan, hourly_only: bool) -> bool:
    """A change whose cost moves (the hourly kinds only, or all) was priced at a placeholder."""
    return any(
        getattr(change, "placeholder_price", False) and _known_delta([change]) != 0
        for kind, changes in plan.kinds()
        if preview_of(kind).per_hour or not hourly_only
        for change in changes
    )


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
        placeholder = _on_placeholder(plan, hourly_only=True)
        found.append(GuardrailBreach("--max-hourly-increase", "h", max_hourly, rise, placeholder))
    if max_monthly is not None and (rise := monthly_increase(plan)) > max_monthly + 1e-9:
        placeholder = _on_placeholder(plan, hourly_only=False)
        found.append(
            GuardrailBreach("--max-monthly-increase", "month", max_monthly, rise, placeholder)
        )
    return tuple(found)


def guardrail_lines(
    plan: StackPlan, crossed: Sequence[GuardrailBreach], blocking: Sequence[GuardrailBreach]
) -> list[str]:
    """The comment's callouts for the ``crossed`` thresholds: the ``blocking`` ones, and a
    warning for those computed on placeholder rates that the stack does not let block."""
    warned = [b for b in crossed if b not in blocking]
    lines: list[str] = []
    if blocking:
        lines += [
            "> [!CAUTION]",
            f"> **Blocked by {len(blocking)} cost guardrail(s):** the PR raises the cost past a "
            "threshold its workflow sets.",
            *(f"> - {breach.describe()}" for breach in blocking),
        ]
        if any(b.placeholder for b in blocking):
            lines.append(f"> {PLACEHOLDER_MARK} {placeholder_legend(plan)}")
        lines.append("")
    if warned:
        key = f"`{plan.project or '<project>'}:failOnPlaceholderPrices`"
        lines += [
            "> [!WARNING]",
            f"> **{len(warned)} cost guardrail(s) crossed on placeholder rates: not blocking.** "
            f"A made-up price does not fail the PR; set real rates, or set {key} to `true` to "
            "block on these too.",
            *(f"> - {breach.describe()}" for breach in warned),
            f"> {PLACEHOLDER_MARK} {placeholder_legend(plan)}",
            "",
        ]
    return lines


def placeholder_legend(plan: Priced) -> str:
    """What the mark means and where real rates go."""
    prices = plan.prices
    return (
        f"computed from a placeholder rate of `{prices.file}` (not a price list; as of "
        f"{prices.as_of}): put real rates there (or pass `--prices FILE`), or per stack under "
        f"`{plan.project or '<project>'}:pricesPerGpuHour`."
    )
