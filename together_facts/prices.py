"""On-demand GPU prices and the hourly cost of a cluster: here, the one layer the PR preview, the
policy pack and the autoscaler's ``--max-hourly-usd`` cap may all import, so they price alike."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from together_facts.errors import InputError
from together_facts.values import GPU_TYPES, GPUS_PER_NODE

__all__ = [
    "DEFAULT_PRICES_FILE",
    "PREEMPTIBLE_PRICE_FACTOR",
    "STORAGE_KEY",
    "PriceInputError",
    "PriceTable",
    "hourly_cost",
    "load_price_table",
    "max_preemptible_within",
    "parse_rates",
]

DEFAULT_PRICES_FILE: Final = Path(__file__).with_name("prices.json")
"""A data file, not code: prices change more often than code, and a reader must be able to see
where a figure came from (the file names its source and date)."""
PREEMPTIBLE_PRICE_FACTOR: Final = 0.5
"""Preemptible GPUs bill at a flat 50% of the on-demand rate of their GPU type, not a spot market
(Together's preemptible-compute announcement)."""

STORAGE_KEY: Final = "storage_usd_per_tib_month"
"""The price file's shared-volume storage rate (optional)."""


class PriceInputError(InputError):
    """A price table (or the input priced with it) cannot be used; `source` names the file."""

    def __init__(self, source: str, message: str, *, fix: str | None = None) -> None:
        super().__init__(f"{source}: {message}", fix=fix)
        self.source = source


@dataclass(frozen=True)
class PriceTable:
    """USD per GPU-hour on demand, keyed by Together GPU type, with where the figures came from."""

    rates: Mapping[str, float]
    source: str
    as_of: str
    overridden: frozenset[str] = field(default_factory=frozenset)
    storage_per_tib_month: float | None = None
    """USD per TiB-month of shared-volume storage (None: the table has no storage rate)."""
    placeholder: bool = False
    """The file's rates are placeholders, not a price list (its `placeholder` key): every figure
    computed from one of them is marked where it is shown, and its guardrail only warns."""
    file: str = ""
    """The file the rates came from, as a reader finds it (`together_facts/prices.json`)."""

    def rate(self, gpu_type: str, where: str) -> float:
        """The on-demand rate of `gpu_type`; an unpriced type is an input error, never $0."""
        try:
            return self.rates[gpu_type]
        except KeyError:
            raise PriceInputError(
                where,
                f"GPU type {gpu_type!r} has no price in the price table ({self.source_label})",
                fix=f"add {gpu_type} to the price table, or override its rate",
            ) from None

    def is_placeholder(self, gpu_type: str | None) -> bool:
        """`gpu_type`'s rate is the file's placeholder (not a stack's override)."""
        return self.placeholder and gpu_type not in self.overridden

    @property
    def source_label(self) -> str:
        return f"{self.source}, as of {self.as_of}"

    def with_overrides(self, overrides: Mapping[str, float]) -> PriceTable:
        """A copy with some rates replaced (per-stack config); the source says so."""
        if not overrides:
            return self
        return PriceTable(
            rates={**self.rates, **overrides},
            source=self.source,
            as_of=self.as_of,
            overridden=self.overridden | frozenset(overrides),
            storage_per_tib_month=self.storage_per_tib_month,
            placeholder=self.placeholder,
            file=self.file,
        )


def hourly_cost(
    table: PriceTable, gpu_type: str, standard: int, preemptible: int, where: str
) -> float:
    """Hourly cost of `standard` GPUs plus a fully filled preemptible target, in USD.

    The preemptible part is an upper bound: Together bills only *allocated* preemptible GPUs.
    """
    rate = table.rate(gpu_type, where)
    return standard * rate + preemptible * rate * PREEMPTIBLE_PRICE_FACTOR


def max_preemptible_within(max_hourly_usd: float, rate: float, standard: int) -> int:
    """The inverse of :func:`hourly_cost`: the largest preemptible target, a multiple of 8 (whole
    nodes), whose filled cost with ``standard`` GPUs at the on-demand ``rate`` stays within
    ``max_hourly_usd``; 0 when the standard GPUs alone use the budget up. ``rate`` > 0."""
    room = max_hourly_usd - standard * rate
    gpus = math.floor(room / (rate * PREEMPTIBLE_PRICE_FACTOR) + 1e-9)  # 1e-9: float round-off
    return max(gpus // GPUS_PER_NODE * GPUS_PER_NODE, 0)


def parse_rates(raw: object, where: str) -> dict[str, float]:
    """Validate a `{GPU_TYPE: rate}` map: known GPU types only, finite non-negative numbers."""
    if not isinstance(raw, Mapping):
        raise PriceInputError(where, f"prices must be a map of GPU type to USD, got {raw!r}")
    rates: dict[str, float] = {}
    for gpu_type, rate in raw.items():
        if gpu_type not in GPU_TYPES:
            raise PriceInputError(
                where,
                f"unknown GPU type {gpu_type!r} in the price table",
                fix=f"use one of {', '.join(GPU_TYPES)}",
            )
        if isinstance(rate, bool) or not isinstance(rate, int | float) or not 0 <= rate < 1e6:
            raise PriceInputError(
                where, f"price of {gpu_type} must be a non-negative number of USD, got {rate!r}"
            )
        rates[str(gpu_type)] = float(rate)
    return rates


def load_price_table(path: Path = DEFAULT_PRICES_FILE) -> PriceTable:
    """Read a price file (the shape of `prices.json`); every problem names the file."""
    where = str(path)
    try:
        document: Any = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise PriceInputError(where, f"cannot read the price file: {error.strerror}") from None
    except json.JSONDecodeError as error:
        raise PriceInputError(where, f"not valid JSON ({error})") from None
    if not isinstance(document, dict) or "on_demand_usd_per_gpu_hour" not in document:
        raise PriceInputError(
            where, "a price file is an object with an 'on_demand_usd_per_gpu_hour' map"
        )
    storage = document.get(STORAGE_KEY)
    if storage is not None and (
        isinstance(storage, bool) or not isinstance(storage, int | float) or not 0 <= storage < 1e6
    ):
        raise PriceInputError(
            where, f"{STORAGE_KEY} must be a non-negative number of USD, got {storage!r}"
        )
    placeholder = document.get("placeholder", False)
    if not isinstance(placeholder, bool):
        raise PriceInputError(where, f"placeholder must be true or false, got {placeholder!r}")
    return PriceTable(
        rates=parse_rates(document["on_demand_usd_per_gpu_hour"], where),
        source=str(document.get("source", where)),
        as_of=str(document.get("as_of", "unknown date")),
        storage_per_tib_month=None if storage is None else float(storage),
        placeholder=placeholder,
        file=_shown_path(path),
    )


def _shown_path(path: Path) -> str:
    """The bundled file as a reader of the repository finds it; another file as given."""
    if path.resolve() == DEFAULT_PRICES_FILE.resolve():
        return f"{DEFAULT_PRICES_FILE.parent.name}/{DEFAULT_PRICES_FILE.name}"
    return str(path)
