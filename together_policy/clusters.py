"""Checks of Together clusters and shared volumes, from either host. Pure functions that call the
provider's own rulebook and price table, so the pack and the provider never disagree."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final

from together_facts.errors import InputError
from together_facts.prices import parse_rates
from together_policy.provider import (
    CLUSTER_RULEBOOK,
    PRICES_CONFIG_KEY,
    Invalid,
    PriceTable,
    counts,
    hourly_cost,
    instant,
    is_unknown,
    load_price_table,
    timestamp,
)
from together_policy.resources import (
    Res,
    has_preemptible_capacity,
    snake_depends_on,
    snake_inputs,
)
from together_policy.workloads import Violation

_NAMED: Final = re.compile(r"^cluster '[^']*': ")
MAX_STANDARD_GPUS: Final = "maxStandardGpus"
MAX_PREEMPTIBLE_GPUS: Final = "maxPreemptibleGpus"
MAX_USD_PER_HOUR: Final = "maxUsdPerHour"
PRICES_PER_GPU_HOUR: Final = PRICES_CONFIG_KEY
"""The stack's own rates, under the stack config key's name that gives them to the PR comment:
the pack cannot read a stack's config, so its policy config takes them again."""
BUDGET_KEYS: Final = (MAX_STANDARD_GPUS, MAX_PREEMPTIBLE_GPUS, MAX_USD_PER_HOUR)


def cluster_rules(res: Res) -> list[Violation]:
    """The provider's rules (`together_provider.cluster.rules.RULEBOOK`, called, not copied) over
    one cluster's inputs, as on create: no previous inputs."""
    if not res.is_cluster:
        return []
    failures = CLUSTER_RULEBOOK.check_resource({}, snake_inputs(res))[1]
    # The rulebook names the cluster by its cluster_name; the message names the resource instead.
    return [
        Violation(res.urn, f"{res.label} ({f.field}): {_NAMED.sub('', f.reason, count=1)}")
        for f in failures
    ]


@dataclass(frozen=True)
class Budget:
    """Caps per stack; None: no cap. ``rates`` (USD per GPU-hour by GPU type, as the policy
    config gives them) replace the price table's, as a stack's own rates do in the PR comment."""

    max_standard_gpus: float | None = None
    max_preemptible_gpus: float | None = None
    max_usd_per_hour: float | None = None
    rates: Mapping[str, object] = field(default_factory=dict)

    @classmethod
    def from_config(cls, config: Mapping[str, Any] | None) -> Budget:
        config = config or {}
        usd = config.get(MAX_USD_PER_HOUR)
        return cls(
            _cap(config.get(MAX_STANDARD_GPUS)),
            _cap(config.get(MAX_PREEMPTIBLE_GPUS)),
            None if usd is None else float(usd),
            config.get(PRICES_PER_GPU_HOUR) or {},
        )


def _cap(value: object) -> float | None:
    """A GPU cap as the stack's policy config gives it (a whole number is an int already:
    `with_unknowns`), never truncated; None: no cap, or not a number."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value


def budget(
    resources: Iterable[Res], caps: Budget, prices: PriceTable | None = None
) -> list[Violation]:
    """Standard GPUs, preemptible targets and the estimated $/h of every cluster in the stack,
    against the stack's caps. A declared range counts at its ceiling (`max_preemptible_gpus`,
    `auto_scale_max_gpus`): what an autoscaler may reach without a diff is what the budget must
    allow. Clusters with an unknown count are left out of the sums (named). Prices are the PR
    comment's (`together_facts/prices.json`, or ``prices``)."""
    clusters = [r for r in resources if r.is_cluster]
    standard = preemptible = 0
    cost = 0.0
    unknown: list[str] = []
    unpriced: list[str] = []
    configured: set[str] = set()  # GPU types priced at the policy config's rates
    from_file: set[str] = set()  # and at the price file's
    try:
        table = (prices or load_price_table()).with_overrides(
            parse_rates(caps.rates, f"the policy config's {PRICES_PER_GPU_HOUR}")
        )
    except InputError as exc:  # a rate the pack cannot use: said, not a crash of the pack
        return [Violation(None, str(exc))]
    for cluster in clusters:
        inputs = snake_inputs(cluster)
        declared = counts(inputs)
        std, pre = declared.standard.top, declared.preemptible.top
        if std is None or pre is None:
            unknown.append(cluster.name)
            continue
        standard, preemptible = standard + std, preemptible + pre
        gpu_type = inputs.get("gpu_type")
        try:
            cost += hourly_cost(table, str(gpu_type), std, pre, cluster.label)
        except InputError:
            unpriced.append(f"{cluster.name} ({gpu_type})")
            continue
        (configured if str(gpu_type) in table.overridden else from_file).add(str(gpu_type))
    names = ", ".join(f"'{c.name}'" for c in clusters)
    note = f"; not counted (unknown until apply): {', '.join(unknown)}" if unknown else ""
    found = []
    if caps.max_standard_gpus is not None and standard > caps.max_standard_gpus:
        found.append(
            f"the stack's clusters ({names}) ask for num_gpus={standard} standard GPUs in total, "
            f"above the cap {MAX_STANDARD_GPUS}={caps.max_standard_gpus} (auto_scale_max_gpus "
            f"counted where set){note} (fix: lower num_gpus or auto_scale_max_gpus, or raise "
            f"{MAX_STANDARD_GPUS} in this stack's policy config)"
        )
    if caps.max_preemptible_gpus is not None and preemptible > caps.max_preemptible_gpus:
        found.append(
            f"the stack's clusters ({names}) ask for num_preemptible_gpus={preemptible} "
            f"preemptible GPUs in total, above the cap {MAX_PREEMPTIBLE_GPUS}="
            f"{caps.max_preemptible_gpus} (max_preemptible_gpus counted where set){note} (fix: "
            f"lower num_preemptible_gpus or max_preemptible_gpus, or raise {MAX_PREEMPTIBLE_GPUS} "
            "in this stack's policy config)"
        )
    if caps.max_usd_per_hour is not None and cost > caps.max_usd_per_hour:
        skipped = f"; unpriced: {', '.join(unpriced)}" if unpriced else ""
        placeholder = table.placeholder and bool(from_file)
        real = f", or give the real rates with {PRICES_PER_GPU_HOUR}" if placeholder else ""
        found.append(
            f"the stack's clusters ({names}) cost an estimated ${cost:,.2f}/h (standard GPUs "
            "plus a filled preemptible target, each range at its ceiling, "
            f"{_rates_label(table, configured, from_file)}), above the cap "
            f"{MAX_USD_PER_HOUR}={caps.max_usd_per_hour:g}{note}{skipped} (fix: lower the "
            f"GPU counts, or raise {MAX_USD_PER_HOUR}{real} in this stack's policy config)"
        )
    return [Violation(None, message) for message in found]


def _rates_label(table: PriceTable, configured: set[str], from_file: set[str]) -> str:
    """Where the rates of the sum come from: the policy config's, the price file's (which says
    when they are placeholders), or each for its GPU types."""
    config = f"the policy config's {PRICES_PER_GPU_HOUR}"
    if not from_file:
        return f"rates from {config}"
    if not configured:
        return table.source_label
    return (
        f"rates from {config} for {', '.join(sorted(configured))}; for "
        f"{', '.join(sorted(from_file))}: {table.source_label}"
    )


def _uses(cluster: Res, volume: Res) -> bool:
    """The cluster attaches the volume: its volume_id comes from the volume (a dependency) or
    equals the volume's known id."""
    if volume.urn in snake_depends_on(cluster).get("volume_id", ()):
        return True
    volume_id = snake_inputs(cluster).get("volume_id")
    return isinstance(volume_id, str) and volume_id in (
        snake_inputs(volume).get("adopt_volume_id"),
        snake_inputs(volume).get("volume_id"),
    )


def volume_lifecycle_independent(resources: Iterable[Res]) -> list[Violation]:
    """A volume a cluster with preemptible capacity uses outlives that cluster."""
    everything = list(resources)
    found = []
    for volume in (r for r in everything if r.is_volume):
        if snake_inputs(volume).get("is_lifecycle_independent", True) is not False:
            continue
        users = [c for c in everything if c.is_cluster and has_preemptible_capacity(c)]
        users = [c for c in users if _uses(c, volume)]
        if users:
            found.append(
                Violation(
                    volume.urn,
                    f"{volume.label}: is_lifecycle_independent=False, and cluster "
                    f"'{users[0].name}' with a preemptible target uses it, so replacing or "
                    "deleting that cluster deletes the checkpoints its preemptible work relies "
                    "on (fix: is_lifecycle_independent=True, the default; it replaces the volume)",
                )
            )
    return found


MIN_DAYS_LEFT: Final = "minDaysLeft"
DEFAULT_MIN_DAYS_LEFT: Final = 7.0


def reservation_ends_soon(
    resources: Iterable[Res], min_days: float, now: datetime
) -> list[Violation]:
    """A reserved cluster whose declared end (`reservation_end_time`) is less than `min_days`
    after `now`: Together decommissions it at that end, so a stack that keeps it must extend the
    end first (one in-place update). The end is read by the table's own validator."""
    found = []
    for cluster in (r for r in resources if r.is_cluster):
        raw = snake_inputs(cluster).get("reservation_end_time")
        if not isinstance(raw, str) or is_unknown(raw):
            continue
        try:
            end = instant(timestamp("reservation_end_time", raw))
        except Invalid:
            continue  # the provider's check reports a malformed time
        left = (end - now).total_seconds() / 86400
        if left >= min_days:
            continue
        when = "has ended" if left <= 0 else f"ends in {left:.1f} days"
        found.append(
            Violation(
                cluster.urn,
                f"{cluster.label}: reservation_end_time={raw!r} {when}, less than {min_days:g} "
                "days from now; Together decommissions the cluster at its reservation's end "
                "(fix: extend reservation_end_time, an in-place update, or plan its replacement)",
            )
        )
    return found
