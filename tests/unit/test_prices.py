"""The one price table (`together_facts.prices`): the inverse of `hourly_cost` the autoscaler's
``--max-hourly-usd`` cap uses, checked against `hourly_cost` itself; where every figure came from
(the file, its date, its placeholder mark, a stack's overrides); and every way a price file or a
stack's rates are refused, each naming the file and the fix."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from together_facts.prices import (
    DEFAULT_PRICES_FILE,
    PriceInputError,
    PriceTable,
    hourly_cost,
    load_price_table,
    max_preemptible_within,
    parse_rates,
)
from together_facts.values import GPU_TYPES
from together_provider.preview_parts.prices import stack_overrides

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


def _price_file(tmp_path: Path, document: object) -> Path:
    path = tmp_path / "prices.json"
    path.write_text(json.dumps(document) if not isinstance(document, str) else document)
    return path


def _refusal(path: Path) -> PriceInputError:
    with pytest.raises(PriceInputError) as caught:
        load_price_table(path)
    return caught.value


RATES = {"on_demand_usd_per_gpu_hour": {GPU: 2.0}}


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ("{not json", "not valid JSON (Expecting property name enclosed in double quotes: "),
        ([], "a price file is an object with an 'on_demand_usd_per_gpu_hour' map"),
        ({"rates": {}}, "a price file is an object with an 'on_demand_usd_per_gpu_hour' map"),
        (
            RATES | {"storage_usd_per_tib_month": -1},
            "storage_usd_per_tib_month must be a non-negative number of USD, got -1",
        ),
        (
            RATES | {"storage_usd_per_tib_month": True},
            "storage_usd_per_tib_month must be a non-negative number of USD, got True",
        ),
        (
            RATES | {"storage_usd_per_tib_month": "160"},
            "storage_usd_per_tib_month must be a non-negative number of USD, got '160'",
        ),
        (
            RATES | {"storage_usd_per_tib_month": 1e6},
            "storage_usd_per_tib_month must be a non-negative number of USD, got 1000000.0",
        ),
        (RATES | {"placeholder": "yes"}, "placeholder must be true or false, got 'yes'"),
        (
            {"on_demand_usd_per_gpu_hour": []},
            "prices must be a map of GPU type to USD, got []",
        ),
        (
            {"on_demand_usd_per_gpu_hour": {GPU: -0.5}},
            f"price of {GPU} must be a non-negative number of USD, got -0.5",
        ),
        (
            {"on_demand_usd_per_gpu_hour": {GPU: False}},
            f"price of {GPU} must be a non-negative number of USD, got False",
        ),
        (
            {"on_demand_usd_per_gpu_hour": {GPU: "2.99"}},
            f"price of {GPU} must be a non-negative number of USD, got '2.99'",
        ),
        (
            {"on_demand_usd_per_gpu_hour": {GPU: 1e6}},
            f"price of {GPU} must be a non-negative number of USD, got 1000000.0",
        ),
    ],
)
def test_a_bad_price_file_is_refused_naming_the_file(
    tmp_path: Path, document: object, message: str
) -> None:
    path = _price_file(tmp_path, document)
    error = _refusal(path)
    assert error.source == str(path)
    assert str(error).startswith(f"{path}: {message}")


def test_a_missing_price_file_says_it_cannot_be_read(tmp_path: Path) -> None:
    path = tmp_path / "nowhere.json"
    assert str(_refusal(path)) == f"{path}: cannot read the price file: No such file or directory"


def test_an_unknown_gpu_type_is_refused_with_the_known_ones(tmp_path: Path) -> None:
    error = _refusal(_price_file(tmp_path, {"on_demand_usd_per_gpu_hour": {"H100": 2}}))
    assert error.message.endswith(": unknown GPU type 'H100' in the price table")
    assert error.fix == "use one of " + ", ".join(GPU_TYPES)


def test_zero_and_the_largest_rates_are_prices(tmp_path: Path) -> None:
    """A rate may be 0 (a free tier) and anything below a million dollars an hour."""
    rates = {GPU: 0, "H200_SXM": 999_999.5}
    document = {"on_demand_usd_per_gpu_hour": rates, "storage_usd_per_tib_month": 0}
    table = load_price_table(_price_file(tmp_path, document))
    assert table.rates == {GPU: 0.0, "H200_SXM": 999_999.5}
    assert table.storage_per_tib_month == 0.0
    assert parse_rates({GPU: 0.0}, "w") == {GPU: 0.0}


def test_a_price_file_says_where_its_figures_came_from(tmp_path: Path) -> None:
    document = RATES | {
        "source": "the price list",
        "as_of": "2026-12-01",
        "storage_usd_per_tib_month": 160,
    }
    path = _price_file(tmp_path, document)
    table = load_price_table(path)
    assert (table.source, table.as_of, table.file) == ("the price list", "2026-12-01", str(path))
    assert table.storage_per_tib_month == 160.0 and not table.placeholder
    assert table.source_label == "the price list, as of 2026-12-01"
    bare = load_price_table(_price_file(tmp_path, RATES))
    assert (bare.source, bare.as_of) == (str(path), "unknown date")
    assert bare.storage_per_tib_month is None and not bare.placeholder
    assert load_price_table(_price_file(tmp_path, RATES | {"placeholder": True})).placeholder


def test_an_unpriced_gpu_type_is_an_error_with_its_fix() -> None:
    table = PriceTable(rates={GPU: 2.0}, source="the list", as_of="today")
    with pytest.raises(PriceInputError) as caught:
        table.rate("H200_SXM", "dev.json")
    assert caught.value.source == "dev.json"
    assert str(caught.value) == (
        "dev.json: GPU type 'H200_SXM' has no price in the price table (the list, as of today) "
        "(fix: add H200_SXM to the price table, or override its rate)"
    )
    assert caught.value.__cause__ is None and caught.value.__suppress_context__


def test_a_map_that_is_not_one_names_where_it_came_from() -> None:
    with pytest.raises(PriceInputError) as caught:
        parse_rates("H100_SXM=2", "Pulumi.dev.yaml")
    assert caught.value.source == "Pulumi.dev.yaml"
    assert str(caught.value) == (
        "Pulumi.dev.yaml: prices must be a map of GPU type to USD, got 'H100_SXM=2'"
    )


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ({}, {}),
        ({"proj:pricesPerGpuHour": {GPU: 1}}, {GPU: 1.0}),
        ({"proj:pricesPerGpuHour": json.dumps({GPU: 1.5})}, {GPU: 1.5}),
        ({"other:pricesPerGpuHour": {GPU: 1}}, {}),
    ],
)
def test_a_stacks_own_rates_come_from_its_project_config_key(
    config: dict[str, object], expected: dict[str, float]
) -> None:
    assert stack_overrides(config, "proj", "dev.json") == expected
    assert stack_overrides(config, None, "dev.json") == {}


def test_a_secret_or_unreadable_override_says_how_to_set_it() -> None:
    with pytest.raises(PriceInputError) as caught:
        stack_overrides({"proj:pricesPerGpuHour": "[secret]"}, "proj", "dev.json")
    assert caught.value.source == "dev.json"
    assert str(caught.value) == (
        "dev.json: config proj:pricesPerGpuHour is not a map of GPU type to USD: '[secret]' "
        "(fix: set it as an object in Pulumi.<stack>.yaml, not as a secret)"
    )
    assert caught.value.__suppress_context__
    with pytest.raises(PriceInputError) as bad_rate:
        stack_overrides({"proj:pricesPerGpuHour": {GPU: -1}}, "proj", "dev.json")
    assert bad_rate.value.source == "dev.json (config proj:pricesPerGpuHour)"


def test_the_bundled_file_is_shown_by_its_place_in_the_repository() -> None:
    assert load_price_table(DEFAULT_PRICES_FILE).file == "together_facts/prices.json"
    relative = Path(os.path.relpath(DEFAULT_PRICES_FILE))
    assert load_price_table(relative).file == "together_facts/prices.json"
