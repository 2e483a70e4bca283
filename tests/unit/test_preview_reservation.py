"""A reservation extension in the PR comment: its own line with the days it adds and what they
cost (with the placeholder mark where the rate is one)."""

from __future__ import annotations

import json
from typing import Any

from tests.unit.test_preview_render import PROJECT, _doc, _plan, _state, _step
from together_provider.preview import load_price_table, render

RESERVED: dict[str, Any] = {
    "gpu_type": "H100_SXM",
    "num_gpus": 16,
    "billing_type": "RESERVED",
    "duration_days": 90,
    "num_reserved_gpus": 16,
    "reservation_end_time": "2027-03-31T00:00:00Z",
}


def _extend(end: str, **config: Any) -> dict[str, Any]:
    return _doc(
        _step(
            "update",
            "research",
            _state("research", 0, **RESERVED),
            _state("research", **{**RESERVED, "reservation_end_time": end}),
        ),
        config=config,
    )


def test_an_extension_is_its_own_line_with_days_and_cost() -> None:
    comment = render([_plan(_extend("2027-04-30T00:00:00+00:00"))])
    rate = load_price_table().rates["H100_SXM"]
    assert "Reservation extensions:" in comment
    assert (
        "- `research`: reservation extended by 30 days, 2027-03-31T00:00:00Z → "
        f"2027-04-30T00:00:00Z: ≈ ${16 * rate * 24 * 30:,.2f}† for 16 reserved GPUs at the "
        "on-demand rate"
    ) in comment


def test_a_stack_rate_prices_it_without_the_placeholder_mark() -> None:
    rates = {f"{PROJECT}:pricesPerGpuHour": json.dumps({"H100_SXM": 1.0})}
    comment = render([_plan(_extend("2027-04-01T12:00:00Z", **rates))])
    assert "extended by 1.5 days" in comment
    assert f"≈ ${16 * 24 * 1.5:,.2f} for 16 reserved GPUs" in comment


def test_an_unchanged_or_earlier_end_is_no_extension() -> None:
    assert "Reservation extensions:" not in render([_plan(_extend("2027-03-31T00:00:00Z"))])
    assert "Reservation extensions:" not in render([_plan(_extend("2027-03-01T00:00:00Z"))])


def test_the_reserved_count_prices_it_even_when_zero_and_num_gpus_when_unset() -> None:
    rates = {f"{PROJECT}:pricesPerGpuHour": json.dumps({"H100_SXM": 1.0})}
    end = "2027-04-01T00:00:00Z"
    none_reserved = _doc(
        _step(
            "update",
            "research",
            _state("research", 0, **{**RESERVED, "num_reserved_gpus": 0}),
            _state("research", **{**RESERVED, "num_reserved_gpus": 0, "reservation_end_time": end}),
        ),
        config=rates,
    )
    assert "≈ $0.00 for 0 reserved GPUs" in render([_plan(none_reserved)])
    unset = {k: v for k, v in RESERVED.items() if k != "num_reserved_gpus"}
    by_num_gpus = _doc(
        _step(
            "update",
            "research",
            _state("research", 0, **unset),
            _state("research", **{**unset, "reservation_end_time": end}),
        ),
        config=rates,
    )
    assert f"≈ ${16 * 24:,.2f} for 16 reserved GPUs" in render([_plan(by_num_gpus)])
