"""`together_facts.prices.max_preemptible_within`: the inverse of `hourly_cost` the autoscaler's
``--max-hourly-usd`` cap uses, checked against `hourly_cost` itself."""

from __future__ import annotations

import re

import pytest

from together_facts.prices import (
    DEFAULT_PRICES_FILE,
    PriceTable,
    hourly_cost,
    load_price_table,
    max_preemptible_within,
)

GPU = "H100_SXM"


@pytest.mark.parametrize(
    ("budget", "rate", "standard", "expected"),
    [
        (40.0, 2.0, 8, 24),  # $16 standard leaves $24: 24 GPUs at $1
        (39.99, 2.0, 8, 16),  # a cent short of the third node
        (16.0, 2.0, 8, 0),  # the standard GPUs use it all
        (10.0, 2.0, 8, 0),  # over budget already: never negative
        (100.0, 2.99, 16, 32),  # $47.84 standard, $1.495/GPU: 34.9 GPUs, whole nodes 32
        (2.0, 0.1, 8, 24),  # 1.2 / 0.05 is 23.999... in floats: round-off loses no node
    ],
)
def test_the_largest_whole_node_target_within_the_budget(
    budget: float, rate: float, standard: int, expected: int
) -> None:
    table = PriceTable(rates={GPU: rate}, source="test", as_of="now")
    got = max_preemptible_within(budget, rate, standard)
    assert got == expected and got % 8 == 0
    if got:
        assert hourly_cost(table, GPU, standard, got, "t") <= budget + 1e-9
    assert hourly_cost(table, GPU, standard, got + 8, "t") > budget


def test_the_price_file_points_only_to_files_in_the_repository() -> None:
    """A reader checking where a rate came from must be able to open what the file names."""
    text = DEFAULT_PRICES_FILE.read_text(encoding="utf-8")
    named = re.findall(r"[\w./-]+\.(?:md|py|json|yaml)\b", text)
    assert named, "the file names where its rates are explained"
    root = DEFAULT_PRICES_FILE.parent.parent.resolve()
    inside = [(root / name).resolve() for name in named]
    assert [p for p in inside if not (p.is_relative_to(root) and p.is_file())] == []


def test_the_bundled_rates_are_marked_as_placeholders() -> None:
    table = load_price_table()
    assert table.placeholder and table.file == "together_facts/prices.json"
    assert table.is_placeholder(GPU)
    assert not table.with_overrides({GPU: 1.0}).is_placeholder(GPU)


def test_an_override_keeps_the_placeholder_mark_on_every_other_gpu_types_rate() -> None:
    """A stack that overrides one GPU type's rate has a real figure for it; every other type's
    rate is still the file's placeholder, and is still marked (†) where it is shown."""
    table = PriceTable(
        rates={GPU: 2.0, "H200_SXM": 1.0},
        source="placeholder file",
        as_of="2026-01-01",
        storage_per_tib_month=20.0,
        placeholder=True,
        file="together_facts/prices.json",
    )
    overridden = table.with_overrides({GPU: 3.0})
    assert overridden.is_placeholder("H200_SXM")
    assert not overridden.is_placeholder(GPU)
    assert overridden.rates == {GPU: 3.0, "H200_SXM": 1.0}
    # Everything else the table says of where its figures came from is kept.
    assert (overridden.source, overridden.as_of, overridden.file) == (
        "placeholder file",
        "2026-01-01",
        "together_facts/prices.json",
    )
    assert overridden.storage_per_tib_month == 20.0
    assert table.with_overrides({}) is table
