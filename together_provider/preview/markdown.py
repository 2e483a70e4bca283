"""Render stack plans as one Markdown PR comment. Blocking problems come first, then what is
lost, then costs: a reviewer must see at a glance whether the PR can merge at all (a rejected
spec blocks it) and whether it destroys capacity (that needs an approval label)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from together_provider.preview.plan import Outcome, StackPlan
from together_provider.preview.policy import PolicyViolation
from together_provider.preview.verdict import Verdict, judged
from together_provider.preview_parts.cells import marked, money, signed_money
from together_provider.preview_parts.guardrails import (
    HOURS_PER_MONTH,
    PLACEHOLDER_MARK,
    guardrail_lines,
    placeholder_legend,
)
from together_provider.preview_parts.kinds import preview_of
from together_provider.preview_parts.steps import Action

__all__ = [
    "HOURS_PER_MONTH",
    "PLACEHOLDER_MARK",
    "Trim",
    "marked",
    "money",
    "placeholder_legend",
    "render",
    "render_failure",
    "render_stack",
    "signed_money",
]

_HEADLINES = {
    Outcome.NO_CHANGES: ":white_check_mark: no changes",
    Outcome.CHANGES: ":arrows_counterclockwise: changes",
    Outcome.REPLACEMENT: ":warning: replacement or deletion",
    Outcome.BLOCKED: ":no_entry: blocked",
}


def _notes(plan: StackPlan) -> list[str]:
    notes = [
        note for kind, changes in plan.kinds() for note in preview_of(kind).notes(changes, plan)
    ]
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


@dataclass(frozen=True)
class Trim:
    """A length a section must keep to, and what its note says of it: whoever posts the comment
    knows the limit (the poster, `gitops.post`); the renderer only trims its lists to it."""

    limit: int
    """The most characters the section may have."""
    why: str
    """Ends "Trimmed to ...": why the section is trimmed."""
    whole: str
    """The note's last sentence: where the untrimmed section is."""


def _trim_note(plan: StackPlan, shown: int, trim: Trim) -> list[str]:
    listed = [
        f"{min(shown, len(items))} of {len(items)} {preview_of(kind).plural}"
        for kind, items in plan.kinds()
        if len(items) > shown
    ]
    return [
        "> [!NOTE]",
        f"> **Trimmed to {trim.why}:** "
        f"{' and '.join(listed) or 'the first findings'} are listed (findings and changed "
        f"fields likewise); the totals and the verdict cover everything. {trim.whole}",
        "",
    ]


def render_stack(
    verdict: Verdict, approval_label: str, trim: Trim | None = None, *, approved: bool = False
) -> str:
    """One stack's section of the comment, trimmed to ``trim.limit`` characters when given.

    An oversized section keeps its summary (headline, blocking callouts, totals, notes) and
    lists only the first clusters, volumes and findings: as many as fit (when even its summary
    does not fit, it is longer: the poster cuts it). ``approved``: the PR carries the approval
    label (the poster reads the PR's labels).
    """
    full = _render_stack(verdict, approval_label, None, approved)
    if trim is None or len(full) <= trim.limit:
        return full
    plan = verdict.plan
    lists = (*plan.changes.values(), verdict.policy, (*plan.rejections, *plan.errors))
    low, high = 0, max(len(items) for items in lists)
    while low < high:  # the largest count of listed items that fits
        middle = (low + high + 1) // 2
        if len(_render_stack(verdict, approval_label, middle, approved, trim)) <= trim.limit:
            low = middle
        else:
            high = middle - 1
    return _render_stack(verdict, approval_label, low, approved, trim)


def _render_stack(
    verdict: Verdict,
    approval_label: str,
    shown: int | None,
    approved: bool = False,
    trim: Trim | None = None,
) -> str:
    """The section, listing at most ``shown`` clusters, volumes and findings of each kind
    (``trim`` says why, in its note)."""
    plan = verdict.plan
    lines = [
        f"### Together GPU clusters: `{plan.stack}` ({_HEADLINES[verdict.outcome]})",
        "",
    ]
    lines += guardrail_lines(plan, verdict.guardrails, verdict.blocking_guardrails)
    if shown is not None and trim is not None:
        lines += _trim_note(plan, shown, trim)
    first = slice(None, shown)
    kinds = [(kind, preview_of(kind), changes, changes[first]) for kind, changes in plan.kinds()]
    if plan.rejections or plan.errors:
        lines += [
            "> [!CAUTION]",
            "> **Blocked: the preview failed, so `pulumi up` would fail too.** "
            "Fix the stack config.",
        ]
        problems = [f"> - `{r.resource}`: {r.message}" for r in plan.rejections]
        problems += [f"> - {error}" for error in plan.errors]
        lines += problems[first]
        lines += [
            "> The engine stops at the first rejected spec: "
            "other clusters' changes may be missing.",
            "",
        ]
    lines += policy_lines(verdict.policy, shown)
    destructive = frozenset({Action.REPLACE, Action.DELETE})
    lost = [
        preview.loss(c)
        for _, preview, _, shown_changes in kinds
        for c in shown_changes
        if c.action in destructive
    ]
    if lost:
        ask = (
            f"> **Approved by the `{approval_label}` label** on this PR."
            if approved
            else f"> **Needs the `{approval_label}` label before it is applied.**"
        )
        lines += ["> [!WARNING]", ask, *(f"> - {loss}" for loss in lost), ""]
    left = [
        note
        for kind, preview, _, shown_changes in kinds
        for note in preview.callouts(
            shown_changes,
            [c for other, _, _, theirs in kinds if other is not kind for c in theirs],
            destructive,
            plan,
        )
    ]
    if left:
        lines += ["> [!NOTE]", *(f"> - {note}" for note in left), ""]
    for _, preview, changes, shown_changes in kinds:
        if changes:
            lines += preview.table(shown_changes, plan, destructive)
    if not plan.all_changes and not (plan.rejections or plan.errors or verdict.policy):
        lines += ["No Together cluster changes.", ""]
    lines.append("<sub>" + "<br>\n".join(_notes(plan)) + "</sub>")
    return "\n".join(lines) + "\n"


def render_failure(stack: str, error: str, log: str | None) -> str:
    """A stack's section when its preview could not be read: the reason and pulumi's stderr."""
    lines = [
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


def render(
    verdicts: Sequence[StackPlan | Verdict], approval_label: str = "approve-replacement"
) -> str:
    """The comment's Markdown: one section per stack, in the order given (a bare plan is judged
    by nothing but itself). Untrimmed and unmarked: `gitops.post.comment` marks each section."""
    return "\n---\n\n".join(render_stack(judged(v), approval_label) for v in verdicts)
