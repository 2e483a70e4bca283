"""A stack's verdict: its plan, its policy violations and the cost guardrails it crosses, built
whole once all three are read (never a plan changed after the fact). Pure: no I/O."""

from __future__ import annotations

from dataclasses import dataclass

from together_provider.preview.plan import Outcome, StackPlan
from together_provider.preview.policy import PolicyViolation
from together_provider.preview_parts.guardrails import GuardrailBreach


@dataclass(frozen=True)
class Verdict:
    """What the PR does to one stack, and whether it may: the comment and the exit code read it.

    A plan alone (no event log, no thresholds) is ``Verdict(plan)``: its outcome is the plan's.
    """

    plan: StackPlan
    policy: tuple[PolicyViolation, ...] = ()
    """The policy pack's violations (from the preview's event log); a mandatory one blocks."""
    guardrails: tuple[GuardrailBreach, ...] = ()
    """The cost thresholds the change crosses (`guardrails.breaches`); each blocks unless it was
    computed on placeholder rates (then it warns, unless the plan's `fail_on_placeholder`)."""

    @property
    def stack(self) -> str:
        return self.plan.stack

    @property
    def blocking_guardrails(self) -> tuple[GuardrailBreach, ...]:
        """The crossed thresholds that block: all of them, except those computed on placeholder
        rates when the stack has not opted in (a made-up price must not fail a PR)."""
        opted_in = self.plan.fail_on_placeholder
        return tuple(b for b in self.guardrails if opted_in or not b.placeholder)

    @property
    def outcome(self) -> Outcome:
        """Blocked by a mandatory policy or a blocking guardrail, else the plan's own outcome."""
        if self.blocking_guardrails or any(v.blocks for v in self.policy):
            return Outcome.BLOCKED
        return self.plan.outcome


def judged(item: StackPlan | Verdict) -> Verdict:
    """``item`` as a verdict: a bare plan is judged by nothing but itself."""
    return item if isinstance(item, Verdict) else Verdict(item)
