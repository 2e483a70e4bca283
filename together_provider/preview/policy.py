"""Policy violations of a preview, for the PR comment, read from the engine's event log:
`pulumi preview --json` leaves policy events out of its document."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from together_provider.preview_parts.prices import PreviewInputError

MANDATORY: Final = "mandatory"
ROOT_STACK_TYPE: Final = "pulumi:pulumi:Stack"
_COLOR_TAG = re.compile(r"<\{%[a-z]*%\}>")


@dataclass(frozen=True)
class PolicyViolation:
    """One `policyEvent`: which policy (and pack), how it is enforced, where, and why."""

    policy: str
    pack: str
    level: str
    """"mandatory" or "advisory" (the engine's "warning")."""
    resource: str | None
    """The resource's name from its URN; None for a violation of the stack as a whole."""
    message: str

    @property
    def blocks(self) -> bool:
        return self.level == MANDATORY


def _name(urn: str) -> str | None:
    """The resource's name; None for the stack itself (a stack policy's finding on no resource)."""
    parts = urn.split("::")
    if len(parts) < 4 or parts[2].split("$")[-1] == ROOT_STACK_TYPE:
        return None
    return parts[-1]


def _message(raw: str) -> str:
    """The violation's own message: the engine sends the policy's description, a newline, then
    the message the policy reported."""
    text = _COLOR_TAG.sub("", raw).strip()
    return text.split("\n", 1)[-1].strip()


def read_policy_events(path: Path) -> tuple[PolicyViolation, ...]:
    """The policy violations in an event log (`pulumi preview --event-log`), in order, once each.

    The log has one JSON engine event per line (the flag needs `PULUMI_DEBUG_COMMANDS=true`, as
    the Automation API sets it); each `policyEvent` gives the policy, its enforcement level, the
    resource and the message. A mandatory violation blocks the PR (exit 12, as a rejected spec
    does); an advisory one is listed.
    """
    where = str(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise PreviewInputError(where, f"cannot read the event log: {error.strerror}") from None
    found: dict[PolicyViolation, None] = {}
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except json.JSONDecodeError as error:
            raise PreviewInputError(
                where,
                f"line {number} is not a JSON engine event ({error.msg})",
                fix="pass the file `pulumi preview --event-log FILE` wrote",
            ) from None
        policy = event.get("policyEvent") if isinstance(event, dict) else None
        if not isinstance(policy, dict):
            continue
        level = str(policy.get("enforcementLevel", ""))
        found[
            PolicyViolation(
                policy=str(policy.get("policyName", "")),
                pack=str(policy.get("policyPackName", "")),
                level="advisory" if level == "warning" else level,
                resource=_name(str(policy.get("resourceUrn") or "")),
                message=_message(str(policy.get("message", ""))),
            )
        ] = None
    return tuple(found)
