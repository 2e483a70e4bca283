"""Render stack plans as one Markdown PR comment: blocking problems first, then what is lost.

Why this order: a reviewer must see at a glance whether the PR can merge at all (a rejected spec
blocks it), whether it destroys capacity (a replacement or deletion needs an approval label), and
only then what it costs. Each stack section starts with a hidden marker so a workflow can find
and update its own comment instead of adding a new one on every push.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from together_provider.preview.guardrails import guardrail_lines
from together_provider.preview.plan import Action, ClusterChange, Outcome, Sizing, StackPlan
from together_provider.preview.policy import PolicyViolation
from together_provider.preview.prices import PREEMPTIBLE_PRICE_FACTOR
from together_provider.preview.volumes import rate_note, volume_loss, volume_notes, volume_table

HOURS_PER_MONTH = 730
COMMENT_LIMIT = 65_536
"""GitHub's limit on a comment's body, in characters (it answers 422 "body is too long")."""
DASH = "\u2013"
"""The en dash of a declared range, as in "preemptible 8-32, live 24"."""
MARKER = "<!-- together-gpu-clusters-preview stack={stack} -->"
"""Hidden first line of a stack's section; workflows match it to edit the previous comment."""

_HEADLINES = {
    Outcome.NO_CHANGES: ":white_check_mark: no changes",
    Outcome.CHANGES: ":arrows_counterclockwise: changes",
    Outcome.REPLACEMENT: ":warning: replacement or deletion",
    Outcome.BLOCKED: ":no_entry: blocked",
}


def money(value: float | None) -> str:
    return "?" if value is None else f"${value:,.2f}"


def signed_money(value: float | None) -> str:
    if value is None:
        return "?"
    if round(value, 2) == 0:
        return "±$0.00"
    return f"{'+' if value > 0 else '-'}${abs(value):,.2f}"


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


def _counts(old: int | str | None, new: int | str | None, live: int | None, **kw: Any) -> str:
    """The count cell: `8 → 16`, or for a range "8-32, live 24" (with an en dash; the live
    value is what the range leaves alone)."""
    text = _arrow(old, new, **kw)
    ranged = isinstance(new, str) or isinstance(old, str)
    return f"{text}, live {live}" if ranged and live is not None and all(kw["exists"]) else text


def _ranges(clusters: Iterable[ClusterChange]) -> list[str]:
    """One line per cluster with a declared range: the range, the live value and the costs."""
    lines: list[str] = []
    for cluster in clusters:
        new = cluster.new
        if new is None or not new.ranged:
            continue
        parts = []
        if new.standard_max is not None:
            live = f", live {cluster.live_standard}" if cluster.old is not None else ""
            parts.append(f"standard {_span(new.standard, new.standard_max)}{live} (auto_scale)")
        if new.preemptible_max is not None:
            live = f", live {_num(cluster.live_preemptible)}" if cluster.old is not None else ""
            parts.append(f"preemptible {_span(new.preemptible, new.preemptible_max)}{live}")
        lines.append(
            f"- `{cluster.name}`: {'; '.join(parts)}: {money(cluster.new_cost)}/h at the floor, "
            f"{money(cluster.ceiling_cost)}/h at the ceiling"
        )
    return lines


def _delta(cluster: ClusterChange) -> float | None:
    if cluster.old_cost is None or cluster.new_cost is None:
        return None
    return cluster.new_cost - cluster.old_cost


def _row(cluster: ClusterChange) -> str:
    exists = (cluster.old is not None, cluster.new is not None)
    old = cluster.old or Sizing(None, None, None)
    new = cluster.new or Sizing(None, None, None)
    gpu_type = _arrow(old.gpu_type or "?", new.gpu_type or "?", exists=(True, True))
    if not all(exists):
        gpu_type = (new.gpu_type if exists[1] else old.gpu_type) or "?"
    cells = [
        f"`{cluster.name}`",
        f"**{cluster.action}**"
        if cluster.action in (Action.REPLACE, Action.DELETE)
        else cluster.action,
        gpu_type,
        _counts(
            _span(old.standard, old.standard_max),
            _span(new.standard, new.standard_max),
            cluster.live_standard,
            exists=exists,
        ),
        _counts(
            _span(old.preemptible, old.preemptible_max),
            _span(new.preemptible, new.preemptible_max),
            cluster.live_preemptible,
            exists=exists,
        ),
        "—" if cluster.old is None else _num(cluster.allocated),
        _arrow(money(cluster.old_cost), money(cluster.new_cost), exists=exists),
        signed_money(_delta(cluster)),
    ]
    return "| " + " | ".join(cells) + " |"


def _loss(cluster: ClusterChange) -> str:
    """What a replacement or deletion takes away, in standard and allocated preemptible GPUs."""
    old = cluster.old or Sizing(None, None, None)
    held = (
        f"{_num(old.standard)} standard GPUs and {_num(cluster.allocated)} allocated "
        "preemptible GPUs"
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
    return f"`{cluster.name}` is **replaced** (because of {reasons}): its {held} go away; {order}"


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


def _totals(plan: StackPlan) -> str:
    known = [c for c in plan.clusters if c.old_cost is not None and c.new_cost is not None]
    old = sum(c.old_cost or 0.0 for c in known)
    new = sum(c.new_cost or 0.0 for c in known)
    delta = new - old
    text = (
        f"**Listed clusters:** {money(old)}/h → {money(new)}/h "
        f"(Δ {signed_money(delta)}/h, ≈ {signed_money(delta * HOURS_PER_MONTH)}/month)"
    )
    if len(known) < len(plan.clusters):
        text += "; clusters whose size is only known after apply are left out"
    return text


def _notes(plan: StackPlan) -> list[str]:
    overridden = ", ".join(sorted(plan.prices.overridden))
    notes = [
        f"On-demand prices: {plan.prices.source_label}"
        + (f"; overridden by stack config for {overridden}" if overridden else "")
        + ".",
        f"Preemptible GPUs are priced at {PREEMPTIBLE_PRICE_FACTOR:.0%} of the on-demand rate; "
        "costs assume the preemptible target is filled (Together bills only allocated GPUs).",
    ]
    if plan.volumes:
        notes.append(rate_note(plan.prices.storage_per_tib_month, plan.prices.source_label))
    if not plan.lists_unchanged:
        notes.append(
            "Unchanged clusters are listed only when the preview runs with `--show-sames`."
        )
    summary = ", ".join(f"{op} {n}" for op, n in sorted(plan.change_summary.items()) if n)
    notes.append(
        f"Engine change summary (all resources): {summary or 'none'}. Source: `{plan.source}`."
    )
    return notes


def policy_lines(violations: Sequence[PolicyViolation], shown: int | None = None) -> list[str]:
    """The policy pack's findings: mandatory ones block the PR, advisory ones are listed (at
    most ``shown`` of each)."""
    lines: list[str] = []
    blocking = [v for v in violations if v.blocks]
    advisory = [v for v in violations if not v.blocks]

    def item(v: PolicyViolation) -> str:
        where = f"`{v.resource}`" if v.resource else "the stack"
        return f"> - **{v.policy}** ({v.level}) on {where}: {v.message}"

    if blocking:
        lines += [
            "> [!CAUTION]",
            f"> **Blocked by {len(blocking)} mandatory policy violation(s)** "
            f"(policy pack `{blocking[0].pack}`): `pulumi up` would stop before any change.",
            *(item(v) for v in blocking[:shown]),
            "",
        ]
    if advisory:
        lines += [
            "> [!TIP]",
            f"> **{len(advisory)} advisory policy violation(s)** (not blocking):",
            *(item(v) for v in advisory[:shown]),
            "",
        ]
    return lines


def _trim_note(plan: StackPlan, shown: int) -> list[str]:
    listed = [
        f"{min(shown, len(items))} of {len(items)} {what}"
        for items, what in ((plan.clusters, "clusters"), (plan.volumes, "shared volumes"))
        if len(items) > shown
    ]
    return [
        "> [!NOTE]",
        f"> **Trimmed to fit GitHub's {COMMENT_LIMIT:,}-character comment limit:** "
        f"{' and '.join(listed) or 'the first findings'} are listed (findings and changed "
        "fields likewise); the totals and the verdict cover everything. The job's step summary "
        "has the whole comment.",
        "",
    ]


def render_stack(
    plan: StackPlan, approval_label: str, limit: int | None = None, *, approved: bool = False
) -> str:
    """One stack's section of the comment, at most ``limit`` characters when given.

    An oversized section keeps its summary (headline, blocking callouts, totals, notes) and
    lists only the first clusters, volumes and findings: as many as fit. ``approved``: the PR
    carries the approval label (the poster reads the PR's labels).
    """
    full = _render_stack(plan, approval_label, None, approved)
    if limit is None or len(full) <= limit:
        return full
    lists = (plan.clusters, plan.volumes, plan.policy, (*plan.rejections, *plan.errors))
    low, high = 0, max(len(items) for items in lists)
    while low < high:  # the largest count of listed items that fits
        middle = (low + high + 1) // 2
        if len(_render_stack(plan, approval_label, middle, approved)) <= limit:
            low = middle
        else:
            high = middle - 1
    return fit(_render_stack(plan, approval_label, low, approved), limit)


def fit(body: str, limit: int = COMMENT_LIMIT, note: str = "cut at GitHub's comment limit") -> str:
    """``body``, or its first characters ending in ``note`` when it is over ``limit``.

    The last resort: a stack's section trims its lists first and is cut only when even its
    summary does not fit; a failure comment or a drift report has no lists to trim.
    """
    if len(body) <= limit:
        return body
    tail = f"\n\n<sub>({note})</sub>\n"
    return body[: limit - len(tail)] + tail


def _render_stack(
    plan: StackPlan, approval_label: str, shown: int | None, approved: bool = False
) -> str:
    """The section, listing at most ``shown`` clusters, volumes and findings of each kind."""
    lines = [
        MARKER.format(stack=plan.stack),
        f"### Together GPU clusters: `{plan.stack}` ({_HEADLINES[plan.outcome]})",
        "",
    ]
    lines += guardrail_lines(plan.guardrails)
    if shown is not None:
        lines += _trim_note(plan, shown)
    first = slice(None, shown)
    clusters, volumes = plan.clusters[first], plan.volumes[first]
    if plan.rejections or plan.errors:
        lines += [
            "> [!CAUTION]",
            "> **Blocked: the preview failed, so `pulumi up` would fail too.** "
            "Fix the stack config.",
        ]
        problems = [f"> - `{r.cluster}`: {r.message}" for r in plan.rejections]
        problems += [f"> - {error}" for error in plan.errors]
        lines += problems[first]
        lines += [
            "> The engine stops at the first rejected spec: "
            "other clusters' changes may be missing.",
            "",
        ]
    lines += policy_lines(plan.policy, shown)
    destructive = frozenset({Action.REPLACE, Action.DELETE})
    lost = [c for c in clusters if c.action in destructive]
    lost_volumes = [v for v in volumes if v.action in destructive]
    if lost or lost_volumes:
        ask = (
            f"> **Approved by the `{approval_label}` label** on this PR."
            if approved
            else f"> **Needs the `{approval_label}` label before it is applied.**"
        )
        lines += ["> [!WARNING]", ask]
        lines += [f"> - {_loss(c)}" for c in lost]
        lines += [f"> - {volume_loss(v)}" for v in lost_volumes]
        lines.append("")
    left = volume_notes(volumes, clusters, destructive, plan.prices.storage_per_tib_month)
    if left:
        lines += ["> [!NOTE]", *(f"> - {note}" for note in left), ""]
    if plan.clusters:
        lines += [
            "| Cluster | Action | GPU type | Standard GPUs | Preemptible target | "
            "Allocated now | Est. cost/h | Δ/h |",
            "|---|---|---|--:|--:|--:|--:|--:|",
            *(_row(c) for c in clusters),
            "",
        ]
        ranges = _ranges(clusters)
        if ranges:
            lines += [
                "Declared ranges (the live value may move inside without a change; costs "
                "above are at the floor):",
                *ranges,
                "",
            ]
        fields = _field_lines(clusters)
        if fields:
            lines += ["Changed fields:", *fields, ""]
        lines += [_totals(plan), ""]
    if plan.volumes:
        lines += volume_table(volumes, destructive)
    if (
        not plan.clusters
        and not plan.volumes
        and not (plan.rejections or plan.errors or plan.policy)
    ):
        lines += ["No Together cluster changes.", ""]
    lines.append("<sub>" + "<br>\n".join(_notes(plan)) + "</sub>")
    return "\n".join(lines) + "\n"


def render_failure(stack: str, error: str, log: str | None) -> str:
    """A stack's section when its preview could not be read: the reason and pulumi's stderr."""
    lines = [
        MARKER.format(stack=stack),
        f"### Together GPU clusters: `{stack}` (:x: preview failed)",
        "",
        f"The preview could not be read: {error}",
        "",
    ]
    if log:
        fence = "`" * 3
        tail = log[-60_000:].replace(fence, "'" * 3)
        lines += ["<details><summary>pulumi's stderr (its end)</summary>", "", fence, tail]
        lines += [fence, "</details>", ""]
    return "\n".join(lines)


def render(plans: Sequence[StackPlan], approval_label: str = "approve-replacement") -> str:
    """The whole comment: one section per stack, in the order given."""
    return "\n---\n\n".join(render_stack(plan, approval_label) for plan in plans)
