"""Policy violations of a preview, for the PR comment: read from the engine's event log.

`pulumi preview --json` leaves policy events out of its document, so the preview workflow also
passes `--event-log FILE` (one JSON engine event per line; the flag needs
`PULUMI_DEBUG_COMMANDS=true`, as the Automation API sets it) and the comment reads each
`policyEvent` there: the policy, its enforcement level, the resource and the message. A
mandatory violation blocks the PR (exit 12, as a rejected spec does); an advisory one is listed.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from together_provider.preview.prices import PreviewInputError

MANDATORY: Final = "mandatory"
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
    return urn.split("::")[-1] if urn else None


def read_policy_events(path: Path) -> tuple[PolicyViolation, ...]:
    """The policy violations in an event log (`pulumi preview --event-log`), in order, once each."""
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
                message=_COLOR_TAG.sub("", str(policy.get("message", ""))).strip(),
            )
        ] = None
    return tuple(found)
