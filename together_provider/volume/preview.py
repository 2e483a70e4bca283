"""Shared volumes in the PR comment: action, size change and storage cost, in a section of their
own because storage bills per TiB-month apart from GPU time and keeps billing after the cluster
that used it is deleted (Together's billing docs: volumes outlive clusters). Pure: no I/O."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from together_provider.extensions import config_key
from together_provider.framework.kind import Kind
from together_provider.framework.schema import UNKNOWN
from together_provider.preview_parts.cells import marked, signed_money
from together_provider.preview_parts.guardrails import placeholder_legend
from together_provider.preview_parts.kinds import StackPlan
from together_provider.preview_parts.prices import PriceTable
from together_provider.preview_parts.steps import Action, merge

_PAST: Final = {"delete": "deleted", "replace": "replaced"}


@dataclass(frozen=True)
class VolumeChange:
    """One shared volume in the plan; sizes in TiB and costs in USD per month (None: unknown)."""

    name: str
    action: Action
    volume_id: str | None
    old_size: int | None
    new_size: int | None
    exists: tuple[bool, bool]
    lifecycle_independent: bool | None
    replace_reasons: tuple[str, ...]
    old_cost: float | None
    new_cost: float | None
    placeholder_price: bool = False
    """Its costs are computed from the price file's placeholder storage rate."""


def _size(props: Mapping[str, Any]) -> int | None:
    value = props.get("size_tib")
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None  # unset, or the unknown sentinel (a string)
    return int(value) if float(value).is_integer() else None


def _monthly(size: int | None, rate: float | None, exists: bool) -> float | None:
    if not exists:
        return 0.0
    if size is None or rate is None:
        return None
    return size * rate


def volume_change(
    name: str,
    action: Any,
    old_state: Mapping[str, Any] | None,
    new_state: Mapping[str, Any] | None,
    replace_reasons: tuple[str, ...],
    rate: float | None,
    placeholder: bool = False,
) -> VolumeChange:
    """One volume's change from its merged steps' states (None where it does not exist)."""
    old = {**(old_state or {}).get("outputs", {}), **(old_state or {}).get("inputs", {})}
    new = {**(new_state or {}).get("outputs", {}), **(new_state or {}).get("inputs", {})}
    exists = (old_state is not None, new_state is not None)
    volume_id = old.get("volume_id") if isinstance(old.get("volume_id"), str) else None
    independent = (new if exists[1] else old).get("is_lifecycle_independent")
    old_size, new_size = _size(old), _size(new) if exists[1] else None
    return VolumeChange(
        name=name,
        action=action,
        volume_id=volume_id if volume_id != UNKNOWN else None,
        old_size=old_size,
        new_size=new_size,
        exists=exists,
        lifecycle_independent=independent if isinstance(independent, bool) else None,
        replace_reasons=replace_reasons,
        old_cost=_monthly(old_size, rate, exists[0]),
        new_cost=_monthly(new_size, rate, exists[1]),
        placeholder_price=placeholder and rate is not None,
    )


# --- markdown -----------------------------------------------------------------------------------


PLACEHOLDER_MARK: Final = "†"
"""The mark of a cost from a placeholder rate (`preview_parts.guardrails.PLACEHOLDER_MARK`)."""


def _money(value: float | None, placeholder: bool = False) -> str:
    if value is None:
        return "?"
    return f"${value:,.2f}{PLACEHOLDER_MARK if placeholder else ''}"


def _arrow(old: str, new: str, exists: tuple[bool, bool]) -> str:
    if not exists[0]:
        return f"— → {new}"
    if not exists[1]:
        return f"{old} → —"
    return old if old == new else f"{old} → {new}"


def _num(value: int | None) -> str:
    return "?" if value is None else str(value)


def _delta(volume: VolumeChange) -> float | None:
    if volume.old_cost is None or volume.new_cost is None:
        return None
    return volume.new_cost - volume.old_cost


def volume_table(volumes: Sequence[VolumeChange], destructive: frozenset[Any]) -> list[str]:
    """The volumes' table: action, size change in TiB and storage cost per month."""
    rows = [
        "| Shared volume | Action | Size (TiB) | Est. storage cost/month | Δ/month |",
        "|---|---|--:|--:|--:|",
    ]
    for v in volumes:
        action = f"**{v.action}**" if v.action in destructive else str(v.action)
        size = _arrow(_num(v.old_size), _num(v.new_size), v.exists)
        mark = v.placeholder_price
        cost = _arrow(_money(v.old_cost, mark), _money(v.new_cost, mark), v.exists)
        delta = marked(signed_money(_delta(v)), mark)  # "?" (no delta) is never marked
        rows.append(f"| `{v.name}` | {action} | {size} | {cost} | {delta} |")
    return [*rows, ""]


def volume_loss(volume: VolumeChange) -> str:
    """What deleting or replacing a volume takes away: its data."""
    held = f"{_num(volume.old_size)} TiB of checkpoints"
    if not volume.exists[1]:
        return f"shared volume `{volume.name}` is **deleted**: its {held} go with it"
    reasons = ", ".join(f"`{r}`" for r in volume.replace_reasons) or "a field fixed at create"
    return (
        f"shared volume `{volume.name}` is **replaced** (because of {reasons}): the new volume "
        f"starts empty and the old one's {held} are deleted"
    )


def volume_notes(
    volumes: Sequence[VolumeChange],
    clusters: Sequence[Any],
    gone: frozenset[Any],
    rate: float | None,
    attached_as: str,
    placeholder: bool = False,
) -> list[str]:
    """What a deleted or replaced cluster (any change that had a volume attached, under
    `attached_as` in its `attached`) leaves behind, or takes with it.

    A reviewer deleting a cluster should see what is left billing, and one whose volume is not
    lifecycle-independent that Together deletes the checkpoints with it.
    """
    by_id = {v.volume_id: v for v in volumes if v.volume_id}
    notes: list[str] = []
    for cluster in clusters:
        volume_id = getattr(cluster, "attached", {}).get(attached_as, {}).get("volume_id")
        if cluster.action not in gone or not volume_id:
            continue
        volume = by_id.get(volume_id)
        if volume is not None and not volume.exists[1]:
            continue  # deleted with it in this change: nothing is left billing
        label = f"`{volume.name}`" if volume else f"`{volume_id}`"
        if volume is not None and volume.lifecycle_independent is False:
            notes.append(
                f"Together deletes shared volume {label} with cluster `{cluster.name}` (it is "
                "not lifecycle-independent): its checkpoints go too."
            )
            continue
        size = volume.old_size if volume else None
        cost = (
            f" (≈ {_money(size * rate, placeholder)}/month)"
            if size is not None and rate is not None
            else ""
        )
        notes.append(
            f"Shared volume {label} outlives cluster `{cluster.name}`: storage keeps billing"
            f"{cost} after the cluster is {_PAST.get(str(cluster.action), 'gone')}, until the "
            "volume is deleted."
        )
    return notes


def rate_note(rate: float | None, source: str, placeholder: bool = False) -> str:
    """The storage rate and where it comes from (`source`: the file, or its label)."""
    shown = (
        "no storage rate in the price table"
        if rate is None
        else f"{_money(rate, placeholder)} per TiB-month"
    )
    origin = f"a PLACEHOLDER rate of {source}, not a price list" if placeholder else source
    return (
        f"Shared-volume storage: {shown} ({origin}); storage bills separately from GPU time and "
        "keeps billing after a cluster is deleted, until its volume is deleted."
    )


class VolumePreview:
    """The SharedVolume's part of the PR comment (`preview_parts.kinds.KindPreview`)."""

    plural = "shared volumes"
    per_hour = False

    def __init__(self, kind: Kind) -> None:
        self.kind = kind

    def change(
        self, name: str, steps: Sequence[dict[str, Any]], prices: PriceTable, where: str
    ) -> VolumeChange:
        _ops, action, old_state, new_state, reasons = merge(steps)
        if action is Action.SAME:
            new_state = old_state
        return volume_change(
            name,
            action,
            old_state,
            new_state,
            reasons,
            prices.storage_per_tib_month,
            prices.placeholder,
        )

    def table(
        self, shown: Sequence[VolumeChange], plan: StackPlan, destructive: frozenset[Any]
    ) -> list[str]:
        lines = volume_table(shown, destructive)
        if any(v.placeholder_price for v in shown):
            lines += [f"{PLACEHOLDER_MARK} {placeholder_legend(plan)}", ""]
        return lines

    def loss(self, change: VolumeChange) -> str:
        return volume_loss(change)

    def callouts(
        self,
        shown: Sequence[VolumeChange],
        others: Sequence[Any],
        gone: frozenset[Any],
        plan: StackPlan,
    ) -> list[str]:
        rate = plan.prices.storage_per_tib_month
        placeholder = plan.prices.placeholder
        return volume_notes(shown, others, gone, rate, config_key(self.kind), placeholder)

    def notes(self, changes: Sequence[VolumeChange], plan: StackPlan) -> list[str]:
        if not changes:
            return []
        prices = plan.prices
        source = f"`{prices.file}`, as of {prices.as_of}" if prices.file else prices.source_label
        return [rate_note(prices.storage_per_tib_month, source, prices.placeholder)]


__all__ = [
    "VolumeChange",
    "VolumePreview",
    "rate_note",
    "volume_change",
    "volume_loss",
    "volume_notes",
    "volume_table",
]
