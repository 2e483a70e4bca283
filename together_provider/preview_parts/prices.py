"""The PR comment's prices: the shared table of `together_facts.prices` (there so that the
autoscaler, which may import only `together_api`, prices a target the same way), plus a stack's
overrides from its config key `<project>:pricesPerGpuHour`."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from together_facts.prices import (
    DEFAULT_PRICES_FILE,
    PREEMPTIBLE_PRICE_FACTOR,
    STORAGE_KEY,
    PriceInputError,
    PriceTable,
    hourly_cost,
    load_price_table,
    parse_rates,
)

__all__ = [
    "DEFAULT_PRICES_FILE",
    "PREEMPTIBLE_PRICE_FACTOR",
    "PRICES_CONFIG_KEY",
    "STORAGE_KEY",
    "PreviewInputError",
    "PriceTable",
    "hourly_cost",
    "load_price_table",
    "stack_overrides",
]

PRICES_CONFIG_KEY: Final = "pricesPerGpuHour"
"""Stack config key (in the project namespace) holding per-stack rate overrides."""

PreviewInputError = PriceInputError
"""The preview JSON or a price table cannot be used; `source` names the file (or stdin). The
same class as `together_facts.prices.PriceInputError`, so one `except` catches both."""


def stack_overrides(config: Mapping[str, Any], project: str | None, where: str) -> dict[str, float]:
    """Per-stack rates from the preview's `config` section (`<project>:pricesPerGpuHour`).

    `pulumi preview --json` prints object-valued config as a JSON string and secrets as
    "[secret]"; both a string and an object are accepted, a secret is refused.
    """
    if project is None:
        return {}
    key = f"{project}:{PRICES_CONFIG_KEY}"
    raw = config.get(key)
    if raw is None:
        return {}
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError:
            raise PreviewInputError(
                where,
                f"config {key} is not a map of GPU type to USD: {raw!r}",
                fix="set it as an object in Pulumi.<stack>.yaml, not as a secret",
            ) from None
    return parse_rates(raw, f"{where} (config {key})")
