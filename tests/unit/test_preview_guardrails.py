"""The preview's cost guardrails (`preview_parts.guardrails`) on plans made here: which
increase counts (only known costs, hourly kinds per hour, monthly ones added to a 730-hour month),
where a threshold is crossed (strictly above it, round-off aside), when a crossing is on
placeholder rates, and every word of the callouts."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pytest

from together_provider.framework.kind import Kind
from together_provider.preview_parts.guardrails import (
    GuardrailBreach,
    breaches,
    guardrail_lines,
    hourly_increase,
    monthly_increase,
    placeholder_legend,
)
from together_provider.preview_parts.kinds import preview_of
from together_provider.preview_parts.prices import PriceTable
from together_provider.registry import KINDS

HOURLY = next(k for k in KINDS if preview_of(k).per_hour)
MONTHLY = next(k for k in KINDS if not preview_of(k).per_hour)
PRICES = PriceTable(
    rates={"H100_SXM": 2.0}, source="s", as_of="2026-11-30", file="together_facts/prices.json"
)


@dataclass(frozen=True)
class Change:
    old_cost: float | None
    new_cost: float | None
    placeholder_price: bool = False


@dataclass
class Plan:
    hourly: tuple[object, ...] = ()
    monthly: tuple[object, ...] = ()
    project: str | None = "proj"
    prices: PriceTable = field(default=PRICES)

    def kinds(self) -> list[tuple[Kind, tuple[Any, ...]]]:
        return [(HOURLY, self.hourly), (MONTHLY, self.monthly)]


def test_only_changes_whose_costs_are_both_known_count() -> None:
    plan = Plan(hourly=(Change(1.0, 3.0), Change(None, 5.0), Change(2.0, None), Change(4.0, 1.0)))
    assert hourly_increase(plan) == -1.0
    assert hourly_increase(Plan(hourly=(object(), Change(1.0, 2.5)))) == 1.5


def test_a_month_is_730_hours_of_the_hourly_kinds_plus_the_monthly_ones() -> None:
    plan = Plan(hourly=(Change(0.0, 1.0),), monthly=(Change(10.0, 20.0),))
    assert monthly_increase(plan) == 740.0
    assert hourly_increase(plan) == 1.0
    assert monthly_increase(Plan(monthly=(Change(30.0, 20.0),))) == -10.0


def test_a_threshold_is_crossed_only_above_it() -> None:
    at = Plan(hourly=(Change(0.0, 2.0),))  # +$2/h, +$1460/month
    assert breaches(at, 2.0, 1460.0) == ()
    over = Plan(hourly=(Change(0.0, 2.5),))  # +$2.50/h, +$1825/month
    assert breaches(over, 2.0, 1824.5) == (
        GuardrailBreach("--max-hourly-increase", "h", 2.0, 2.5),
        GuardrailBreach("--max-monthly-increase", "month", 1824.5, 1825.0),
    )
    assert breaches(over, None, None) == ()
    # Within float round-off of the limit is not over it.
    assert breaches(Plan(hourly=(Change(0.0, 1e-9),)), 0.0, None) == ()
    assert breaches(Plan(monthly=(Change(0.0, 1e-9),)), None, 0.0) == ()


def test_a_crossing_is_on_placeholder_rates_only_where_a_placeholder_priced_cost_moved() -> None:
    # The hourly rise is on real rates; the monthly one includes a placeholder-priced volume.
    plan = Plan(hourly=(Change(0.0, 1.0),), monthly=(Change(0.0, 1.0, placeholder_price=True),))
    hourly, monthly = breaches(plan, 0.5, 1.0)
    assert not hourly.placeholder and monthly.placeholder
    # A placeholder-priced change whose cost did not move taints nothing; one that moved by $1 does.
    still = Plan(hourly=(Change(0.0, 1.0), Change(3.0, 3.0, placeholder_price=True)))
    assert [b.placeholder for b in breaches(still, 0.5, 1.0)] == [False, False]
    moved = Plan(hourly=(Change(0.0, 1.0, placeholder_price=True),))
    assert [b.placeholder for b in breaches(moved, 0.5, 1.0)] == [True, True]
    unmarked = Plan(hourly=(Change(0.0, 1.0),), monthly=(Change(0.0, 1.0),))
    assert [b.placeholder for b in breaches(unmarked, 0.5, 1.0)] == [False, False]


def test_a_breach_describes_itself_with_the_mark_only_on_placeholder_rates() -> None:
    real = GuardrailBreach("--max-hourly-increase", "h", 10.0, 1234.5)
    assert real.describe() == (
        "the cost rises by $1,234.50/h, over the `--max-hourly-increase` threshold of $10.00/h "
        "by $1,224.50"
    )
    made_up = GuardrailBreach("--max-monthly-increase", "month", 10.0, 12.0, placeholder=True)
    assert made_up.describe() == (
        "the cost rises by $12.00†/month, over the `--max-monthly-increase` threshold of "
        "$10.00/month by $2.00†"
    )


def test_the_callouts_read_in_full_blocking_first_then_the_placeholder_warnings() -> None:
    blocking = GuardrailBreach("--max-hourly-increase", "h", 1.0, 2.0)
    warned = GuardrailBreach("--max-monthly-increase", "month", 1.0, 3.0, placeholder=True)
    legend = (
        "> † computed from a placeholder rate of `together_facts/prices.json` (not a price list; "
        "as of 2026-11-30): put real rates there (or pass `--prices FILE`), or per stack under "
        "`proj:pricesPerGpuHour`."
    )
    assert guardrail_lines(Plan(), [blocking, warned], [blocking]) == [
        "> [!CAUTION]",
        "> **Blocked by 1 cost guardrail(s):** the PR raises the cost past a threshold its "
        "workflow sets.",
        f"> - {blocking.describe()}",
        "",
        "> [!WARNING]",
        "> **1 cost guardrail(s) crossed on placeholder rates: not blocking.** A made-up price "
        "does not fail the PR; set real rates, or set `proj:failOnPlaceholderPrices` to `true` "
        "to block on these too.",
        f"> - {warned.describe()}",
        legend,
        "",
    ]
    assert guardrail_lines(Plan(), [warned], [warned]) == [
        "> [!CAUTION]",
        "> **Blocked by 1 cost guardrail(s):** the PR raises the cost past a threshold its "
        "workflow sets.",
        f"> - {warned.describe()}",
        legend,
        "",
    ]
    assert guardrail_lines(Plan(), [], []) == []


@pytest.mark.parametrize(("project", "shown"), [("proj", "proj"), (None, "<project>")])
def test_the_legend_and_the_opt_in_key_name_the_project(project: str | None, shown: str) -> None:
    plan = Plan(project=project)
    assert placeholder_legend(plan).endswith(f"or per stack under `{shown}:pricesPerGpuHour`.")
    warned = GuardrailBreach("--max-hourly-increase", "h", 1.0, 2.0, placeholder=True)
    assert (
        f"set `{shown}:failOnPlaceholderPrices` to `true`" in guardrail_lines(plan, [warned], [])[1]
    )


def test_a_change_that_says_nothing_of_placeholder_rates_is_on_real_ones() -> None:
    """A kind whose changes carry no `placeholder_price` prices on real rates."""
    plan = Plan(hourly=(SimpleNamespace(old_cost=0.0, new_cost=1.0),))
    assert [b.placeholder for b in breaches(plan, 0.5, 1.0)] == [False, False]
