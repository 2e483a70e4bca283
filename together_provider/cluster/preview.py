"""The Cluster's part of a PR comment: GPU counts, declared ranges, changed fields, cost per hour.
A ranged count is judged by the rules' plan, as the provider's diff judges it, so the comment
shows what the update will PUT. Pure: no I/O."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from together_provider.cluster import rules
from together_provider.cluster.table import CLUSTER, counts
from together_provider.extensions import config_key
from together_provider.framework import validators
from together_provider.framework.kind import Kind
from together_provider.framework.rulebook import Plan
from together_provider.preview_parts.cells import marked, money, signed_money
from together_provider.preview_parts.guardrails import (
    HOURS_PER_MONTH,
    PLACEHOLDER_MARK,
    placeholder_legend,
)
from together_provider.preview_parts.kinds import StackPlan, attached_props
from together_provider.preview_parts.prices import PREEMPTIBLE_PRICE_FACTOR, PriceTable, hourly_cost
from together_provider.preview_parts.steps import Action, count, known_str, merge, props_of

DASH: Final = "\u2013"
"""The en dash of a declared range, as in "preemptible 8-32, live 24"."""


@dataclass(frozen=True)
class Sizing:
    """What a cluster bills for: GPU type, standard GPUs and preemptible target (None = unknown).

    With a declared range (`max_preemptible_gpus`, Together's `auto_scale_max_gpus`) the counts
    are the floors and the `*_max` the ceilings; None when no range is declared."""

    gpu_type: str | None
    standard: int | None
    preemptible: int | None
    standard_max: int | None = None
    preemptible_max: int | None = None

    @property
    def ranged(self) -> bool:
        return self.standard_max is not None or self.preemptible_max is not None

    @property
    def at_ceiling(self) -> Sizing:
        """The same cluster with every range at its ceiling: what it can bill at most."""
        return Sizing(
            self.gpu_type,
            self.standard_max if self.standard_max is not None else self.standard,
            self.preemptible_max if self.preemptible_max is not None else self.preemptible,
        )


@dataclass(frozen=True)
class FieldChange:
    name: str
    old: Any
    new: Any
    replaces: bool


@dataclass(frozen=True)
class Extension:
    """A running reservation's end moved later: how many days it adds, for how many reserved
    GPUs, and what those days cost at the on-demand rate (None when not priced)."""

    old_end: str
    new_end: str
    days: float
    gpus: int | None
    cost: float | None


def _extension(
    old: Mapping[str, Any], new: Mapping[str, Any], prices: PriceTable, where: str
) -> Extension | None:
    """The reservation extension of an update, parsed by the table's own validator."""
    ends = []
    for props in (old, new):
        raw = props.get("reservation_end_time")
        try:
            ends.append(validators.timestamp("reservation_end_time", raw) if raw else None)
        except validators.Invalid:
            ends.append(None)
    was, end = ends
    if was is None or end is None or end <= was:
        return None
    days = (validators.instant(end) - validators.instant(was)).total_seconds() / 86400
    reserved = count(new.get("num_reserved_gpus"))  # unset: Together reserves num_gpus
    gpus = count(new.get("num_gpus")) if reserved is None else reserved
    gpu_type = known_str(new.get("gpu_type"))
    cost = None
    if gpus is not None and gpu_type is not None:
        cost = hourly_cost(prices, gpu_type, gpus, 0, where) * 24 * days
    return Extension(was, end, days, gpus, cost)


@dataclass(frozen=True)
class ClusterChange:
    """One Together cluster in the plan, with its costs in USD per hour (None = unknown)."""

    name: str
    action: Action
    op: str
    old: Sizing | None
    new: Sizing | None
    allocated: int | None
    fields: tuple[FieldChange, ...]
    replace_reasons: tuple[str, ...]
    delete_first: bool
    old_cost: float | None
    new_cost: float | None
    attached: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    """What the cluster had attached (its old inputs), by kind (`config_key`): the attached
    resource's properties it was set from (`volume_id`), where known."""
    live_standard: int | None = None
    live_preemptible: int | None = None
    """The live counts before the change (standard GPUs, preemptible target), if known."""
    ceiling_cost: float | None = None
    """With a declared range: the new cost/h with every range at its ceiling."""
    placeholder_price: bool = False
    """Its costs are computed from a placeholder rate (`PriceTable.is_placeholder`)."""
    refreshed: bool = False
    """The preview refreshed it (`--refresh`): its live counts and allocation were read from
    Together just now, not from the stored state."""
    extension: Extension | None = None
    """An update that moves its reservation's end later."""

    @property
    def live_word(self) -> str:
        """What its live counts are called: "live" only when this preview read them."""
        return "live" if self.refreshed else "stored"


def _sizing(state: object) -> Sizing | None:
    if not isinstance(state, dict):
        return None
    props = {**props_of(state, "outputs"), **props_of(state, "inputs")}
    declared = counts(props)
    return Sizing(
        gpu_type=known_str(props.get("gpu_type")),
        standard=declared.standard.floor,
        preemptible=declared.preemptible.floor,
        standard_max=declared.standard.ceiling,
        preemptible_max=declared.preemptible.ceiling,
    )


def _declared(old: Sizing | None, new: Sizing | None) -> tuple[Sizing | None, Sizing | None]:
    """The floors as declared: a refreshed old state holds the *live* value of a ranged floor,
    which is not what the program declared; shown beside the range instead (`live_*`)."""
    if old is None or new is None or not (old.ranged or new.ranged):
        return old, new
    return (
        Sizing(
            old.gpu_type,
            new.standard if old.standard_max is not None else old.standard,
            new.preemptible if old.preemptible_max is not None else old.preemptible,
            old.standard_max,
            old.preemptible_max,
        ),
        new,
    )


_RANGED_WIRE: Final = frozenset(
    wire for floor in CLUSTER.ranges if (wire := CLUSTER.by_name[floor].wire)
)
"""The wire names of the Cluster's ranged floors: a PUT of one moves a live value to a bound."""


def _billed(live: Sizing | None, planned: Plan | None) -> tuple[Sizing, Sizing] | None:
    """What a ranged cluster bills for before and after the update when the rules PUT a ranged
    count (its live value fell outside the new range): the live counts now, the PUT's after.
    None when no ranged count is PUT: both sides then stay at the declared floor."""
    if live is None or planned is None or not planned.update.keys() & _RANGED_WIRE:
        return None
    after = Sizing(
        live.gpu_type,
        planned.update.get("num_gpus", live.standard),
        planned.update.get("num_preemptible_gpus", live.preemptible),
    )
    return Sizing(live.gpu_type, live.standard, live.preemptible), after


def _cost(sizing: Sizing | None, prices: PriceTable, where: str) -> float | None:
    if sizing is None:
        return 0.0
    if sizing.gpu_type is None or sizing.standard is None or sizing.preemptible is None:
        return None
    return hourly_cost(prices, sizing.gpu_type, sizing.standard, sizing.preemptible, where)


def _planned(old: object, new: object) -> Plan | None:
    """The rules' plan of the change, as the provider's diff makes it (None for a create)."""
    before = props_of(old, "inputs")
    return (
        rules.RULEBOOK.plan({**props_of(old, "outputs"), **before}, props_of(new, "inputs"))
        if before
        else None
    )


def _field_changes(
    old: object, new: object, replace_reasons: Sequence[str], planned: Plan | None
) -> tuple[FieldChange, ...]:
    """Each changed input, `oldState.inputs` vs `newState.inputs`: for a dynamic provider the
    engine reports no per-field diff (`detailedDiff` is null)."""
    before, after = props_of(old, "inputs"), props_of(new, "inputs")
    # A ranged floor whose live value stays inside the range is no change, and one outside
    # goes to the nearest bound, not to the floor: the rules' word, as the provider's diff.
    ranged = CLUSTER.ranges
    return tuple(
        FieldChange(
            key,
            before.get(key),
            planned.update.get(key, after.get(key))
            if planned and key in ranged
            else after.get(key),
            key in replace_reasons,
        )
        for key in sorted(before.keys() | after.keys())
        if not key.startswith("__")
        and before.get(key) != after.get(key)
        and (key not in ranged or (planned is not None and key in planned.changed))
    )


# --- markdown -----------------------------------------------------------------------------------


def _num(value: int | None) -> str:
    return "?" if value is None else str(value)


def _arrow(old: int | str | None, new: int | str | None, *, exists: tuple[bool, bool]) -> str:
    """`8 → 16` when it changes, `8` when not; `—` for the side where the cluster does not exist."""
    before = _num(old) if isinstance(old, int | None) else old
    after = _num(new) if isinstance(new, int | None) else new
    if not exists[0]:
        return f"— → {after}"
    if not exists[1]:
        return f"{before} → —"
    return before if before == after else f"{before} → {after}"


def _span(floor: int | None, ceiling: int | None) -> int | str | None:
    """A declared range as `8` en dash `32`; a plain count when none is declared."""
    return floor if ceiling is None else f"{_num(floor)}{DASH}{ceiling}"


def _counts(
    old: int | str | None, new: int | str | None, live: int | None, word: str, **kw: Any
) -> str:
    """The count cell: `8 → 16`, or for a range "8-32, live 24" (with an en dash; the live
    value is what the range leaves alone; `word` is "stored" when it was not refreshed)."""
    text = _arrow(old, new, **kw)
    ranged = isinstance(new, str) or isinstance(old, str)
    return f"{text}, {word} {live}" if ranged and live is not None and all(kw["exists"]) else text


def _ranges(clusters: Iterable[ClusterChange]) -> list[str]:
    """One line per cluster with a declared range: the range, the live value and the costs."""
    lines: list[str] = []
    for cluster in clusters:
        new = cluster.new
        if new is None or not new.ranged:
            continue
        parts = []
        word = cluster.live_word
        if new.standard_max is not None:
            live = f", {word} {cluster.live_standard}" if cluster.old is not None else ""
            parts.append(f"standard {_span(new.standard, new.standard_max)}{live} (auto_scale)")
        if new.preemptible_max is not None:
            live = f", {word} {_num(cluster.live_preemptible)}" if cluster.old is not None else ""
            parts.append(f"preemptible {_span(new.preemptible, new.preemptible_max)}{live}")
        mark = cluster.placeholder_price
        lines.append(
            f"- `{cluster.name}`: {'; '.join(parts)}: {marked(money(cluster.new_cost), mark)}/h "
            f"at the floor, {marked(money(cluster.ceiling_cost), mark)}/h at the ceiling"
        )
    return lines


def _delta(cluster: ClusterChange) -> float | None:
    if cluster.old_cost is None or cluster.new_cost is None:
        return None
    return cluster.new_cost - cluster.old_cost


def _row(cluster: ClusterChange, destructive: frozenset[Any]) -> str:
    exists = (cluster.old is not None, cluster.new is not None)
    old = cluster.old or Sizing(None, None, None)
    new = cluster.new or Sizing(None, None, None)
    gpu_type = _arrow(old.gpu_type or "?", new.gpu_type or "?", exists=(True, True))
    if not all(exists):
        gpu_type = (new.gpu_type if exists[1] else old.gpu_type) or "?"
    # One count cell per GPU class (standard, then the preemptible target), built one way.
    classes = [
        (old.standard, old.standard_max, new.standard, new.standard_max, cluster.live_standard),
        (
            old.preemptible,
            old.preemptible_max,
            new.preemptible,
            new.preemptible_max,
            cluster.live_preemptible,
        ),
    ]
    cells = [
        f"`{cluster.name}`",
        f"**{cluster.action}**" if cluster.action in destructive else cluster.action,
        gpu_type,
        *(
            _counts(_span(o, o_max), _span(n, n_max), live, cluster.live_word, exists=exists)
            for o, o_max, n, n_max, live in classes
        ),
        "—" if cluster.old is None else _num(cluster.allocated),
        _arrow(
            marked(money(cluster.old_cost), cluster.placeholder_price),
            marked(money(cluster.new_cost), cluster.placeholder_price),
            exists=exists,
        ),
        marked(signed_money(_delta(cluster)), cluster.placeholder_price),
    ]
    return "| " + " | ".join(cells) + " |"


def _value(value: object) -> str:
    return "unset" if value is None else f"`{value}`"


def _field_lines(clusters: Iterable[ClusterChange]) -> list[str]:
    lines: list[str] = []
    for cluster in clusters:
        for change in cluster.fields:
            tag = " (forces replacement)" if change.replaces else ""
            old, new = _value(change.old), _value(change.new)
            lines.append(f"- `{cluster.name}`.`{change.name}`: {old} → {new}{tag}")
    return lines


def _extension_lines(clusters: Iterable[ClusterChange]) -> list[str]:
    """One line per reservation extended: the ends, the days it adds and what they cost."""
    lines = []
    for cluster in clusters:
        ext = cluster.extension
        if ext is None:
            continue
        cost = marked(money(ext.cost), cluster.placeholder_price)
        gpus = f"{_num(ext.gpus)} reserved GPUs"
        lines.append(
            f"- `{cluster.name}`: reservation extended by {ext.days:g} days, {ext.old_end} → "
            f"{ext.new_end}: ≈ {cost} for {gpus} at the on-demand rate"
        )
    return lines


def _totals(clusters: Sequence[Any]) -> str:
    known = [c for c in clusters if c.old_cost is not None and c.new_cost is not None]
    old = sum(c.old_cost or 0.0 for c in known)
    new = sum(c.new_cost or 0.0 for c in known)
    delta = new - old
    mark = PLACEHOLDER_MARK if any(c.placeholder_price for c in known) else ""
    text = (
        f"**Listed clusters:** {money(old)}{mark}/h → {money(new)}{mark}/h "
        f"(Δ {signed_money(delta)}{mark}/h, "
        f"≈ {signed_money(delta * HOURS_PER_MONTH)}{mark}/month)"
    )
    if mark:
        text += f" {mark} placeholder rates, not a price list"
    if len(known) < len(clusters):
        text += "; clusters whose size is only known after apply are left out"
    return text


def _staleness(shown: Sequence[ClusterChange], plan: StackPlan) -> list[str]:
    """Where the live figures come from, when not from Together just now: the stored state."""
    if plan.refreshed or not any(c.old is not None for c in shown):
        return []
    when = f"last written {plan.state_time}" if plan.state_time else "time unknown"
    return [
        "> [!NOTE]",
        f"> **Not refreshed:** the allocated GPUs and the *stored* values inside declared ranges "
        f"are the stack's stored state as of its last refresh or update ({when}), not "
        "Together's current figures. `pulumi preview --refresh` reads current ones (the GitOps "
        "preview workflow runs it).",
        "",
    ]


def price_note(changes: Sequence[ClusterChange], plan: StackPlan) -> str:
    """Where the rates of the GPU types shown come from: the stack's own, or the price file
    (named as a placeholder when it is one, with the file and the key that replace it)."""
    prices = plan.prices
    types = sorted(
        {s.gpu_type for c in changes for s in (c.old, c.new) if s and s.gpu_type}
        or prices.rates.keys()
    )
    key = f"`{plan.project or '<project>'}:pricesPerGpuHour`"
    own = [t for t in types if t in prices.overridden]
    parts = []
    if own:
        rates = ", ".join(f"{t} ${prices.rates[t]:,.2f}" for t in own)
        parts.append(f"the stack's own rates from {key}: {rates} per GPU-hour")
    rest = [t for t in types if t not in prices.overridden]
    if rest and prices.placeholder:
        parts.append(
            f"{PLACEHOLDER_MARK} PLACEHOLDER rates for {', '.join(rest)} from `{prices.file}` "
            f"(not a price list, as of {prices.as_of}): replace them there, pass `--prices "
            f"FILE`, or set this stack's under {key}"
        )
    elif rest:
        parts.append(f"{', '.join(rest)} from `{prices.file}` ({prices.source_label})")
    return f"On-demand prices: {'; '.join(parts)}."


class ClusterPreview:
    """The Cluster's part of the PR comment (`preview_parts.kinds.KindPreview`)."""

    plural = "clusters"
    per_hour = True

    def __init__(self, kind: Kind) -> None:
        self.kind = kind

    def change(
        self, name: str, steps: Sequence[dict[str, Any]], prices: PriceTable, where: str
    ) -> ClusterChange:
        """Merge one cluster's steps into one change.

        A replacement may print three steps; `preview --refresh` prints a `refresh` step first,
        whose states are the stored and the live ones, so the states come from the other steps.
        """
        ops, action, old_state, new_state, reasons = merge(steps)
        live = _sizing(old_state)
        old, new = _declared(live, _sizing(new_state))
        old_inputs, new_inputs = props_of(old_state, "inputs"), props_of(new_state, "inputs")
        old_outputs = props_of(old_state, "outputs")
        planned = (
            _planned(old_state, new_state) if action not in (Action.CREATE, Action.DELETE) else None
        )
        billed = _billed(live, planned) if action is Action.UPDATE and new and new.ranged else None
        if action is Action.SAME:
            new = old
        return ClusterChange(
            name=name,
            action=action,
            op="/".join(dict.fromkeys(ops)),
            old=old,
            new=new,
            allocated=count(old_outputs.get("allocated_preemptible_gpus")),
            fields=()
            if action in (Action.CREATE, Action.DELETE)
            else _field_changes(old_state, new_state, reasons, planned),
            replace_reasons=reasons,
            delete_first=action is Action.REPLACE
            and rules.replacement_deletes_first(old_inputs, new_inputs),
            old_cost=_cost(billed[0] if billed else old, prices, where),
            new_cost=_cost(billed[1] if billed else new, prices, where),
            attached=attached_props(self.kind, old_inputs),
            live_standard=count(old_outputs.get("num_gpus")),
            live_preemptible=count(old_outputs.get("desired_preemptible_gpus")),
            ceiling_cost=_cost(new.at_ceiling, prices, where) if new and new.ranged else None,
            placeholder_price=any(
                prices.is_placeholder(s.gpu_type) for s in (old, new) if s and s.gpu_type
            ),
            refreshed="refresh" in ops,
            extension=_extension(old_inputs, new_inputs, prices, where)
            if action is Action.UPDATE
            else None,
        )

    def table(
        self, shown: Sequence[ClusterChange], plan: StackPlan, destructive: frozenset[Any]
    ) -> list[str]:
        allocated = (
            "Allocated now (refreshed)"
            if plan.refreshed
            else f"Allocated as of {plan.state_time or 'the last refresh'}"
        )
        lines = [
            *_staleness(shown, plan),
            "| Cluster | Action | GPU type | Standard GPUs | Preemptible target | "
            f"{allocated} | Est. cost/h | Δ/h |",
            "|---|---|---|--:|--:|--:|--:|--:|",
            *(_row(c, destructive) for c in shown),
            "",
        ]
        if any(c.placeholder_price for c in shown):
            lines += [f"{PLACEHOLDER_MARK} {placeholder_legend(plan)}", ""]
        ranges = _ranges(shown)
        if ranges:
            lines += [
                "Declared ranges (the live value may move inside without a change; costs "
                "above are at the floor):",
                *ranges,
                "",
            ]
        extensions = _extension_lines(shown)
        if extensions:
            lines += ["Reservation extensions:", *extensions, ""]
        fields = _field_lines(shown)
        if fields:
            lines += ["Changed fields:", *fields, ""]
        return [*lines, _totals(plan.changes[config_key(self.kind)]), ""]

    def loss(self, cluster: ClusterChange) -> str:
        """What a replacement or deletion takes away, in standard and allocated preemptible
        GPUs."""
        old = cluster.old or Sizing(None, None, None)
        when = "" if cluster.refreshed else " (as of the last refresh)"
        held = (
            f"{_num(old.standard)} standard GPUs and {_num(cluster.allocated)} allocated "
            f"preemptible GPUs{when}"
        )
        if cluster.action is Action.DELETE:
            return f"`{cluster.name}` is **deleted**: its {held} are released"
        reasons = (
            ", ".join(f"`{r}`" for r in cluster.replace_reasons)
            or "a field that cannot change in place"
        )
        order = (
            "the old cluster is deleted first, so there is no capacity until the new one is Ready"
            if cluster.delete_first
            else "the new cluster is created first, so both bill until the old one is deleted"
        )
        return (
            f"`{cluster.name}` is **replaced** (because of {reasons}): its {held} go away; {order}"
        )

    def callouts(
        self, shown: Sequence[Any], others: Sequence[Any], gone: frozenset[Any], plan: StackPlan
    ) -> list[str]:
        return []

    def notes(self, changes: Sequence[ClusterChange], plan: StackPlan) -> list[str]:
        return [
            price_note(changes, plan),
            f"Preemptible GPUs are priced at {PREEMPTIBLE_PRICE_FACTOR:.0%} of the on-demand "
            "rate; costs assume the preemptible target is filled (Together bills only allocated "
            "GPUs).",
        ]
