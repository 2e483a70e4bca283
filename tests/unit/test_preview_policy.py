"""Policy violations in the PR comment, from a hand-written engine event log."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from together_provider.preview import BAD_INPUT_EXIT, PreviewInputError
from together_provider.preview.__main__ import main
from together_provider.preview.policy import read_policy_events

PROJECT = "together-gpu-clusters"
POD_URN = f"urn:pulumi:dev::{PROJECT}::kubernetes:core/v1:Pod::shell"


def _event(level: str, policy: str, urn: str = "", message: str = "why (fix: how)") -> str:
    body: dict[str, Any] = {
        "resourceUrn": urn,
        "message": f"<{{%reset%}}>What the policy checks.\n{message}<{{%reset%}}>\n",
        "color": "never",
        "policyName": policy,
        "policyPackName": "together-preemptible",
        "policyPackVersion": "0.1.0",
        "policyPackVersionTag": "0.1.0",
        "enforcementLevel": level,
    }
    return json.dumps({"sequence": 1, "timestamp": 0, "policyEvent": body})


def _write(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "events.jsonl"
    path.write_text("\n".join([json.dumps({"sequence": 0, "preludeEvent": {}}), *lines]) + "\n")
    return path


def _preview(tmp_path: Path) -> Path:
    document = {
        "config": {f"{PROJECT}:clusters": "{}"},
        "steps": [{"op": "same", "urn": f"urn:pulumi:dev::{PROJECT}::pulumi:pulumi:Stack::x"}],
        "changeSummary": {"same": 1},
    }
    path = tmp_path / "dev.json"
    path.write_text(json.dumps(document))
    return path


def test_events_are_read_once_each_with_levels_and_resource_names(tmp_path: Path) -> None:
    grace = _event("mandatory", "drain-window-grace-period", POD_URN)
    stack = f"urn:pulumi:dev::{PROJECT}::pulumi:pulumi:Stack::{PROJECT}-dev"
    events = _write(tmp_path, grace, grace, _event("warning", "gpu-budget", stack))
    mandatory, advisory = read_policy_events(events)
    assert (mandatory.policy, mandatory.level, mandatory.resource) == (
        "drain-window-grace-period",
        "mandatory",
        "shell",
    )
    assert mandatory.message == "why (fix: how)" and mandatory.blocks
    assert (advisory.level, advisory.resource, advisory.blocks) == ("advisory", None, False)


@pytest.mark.parametrize(("level", "code"), [("mandatory", 12), ("warning", 0)])
def test_a_mandatory_violation_blocks_and_an_advisory_is_listed(
    tmp_path: Path, level: str, code: int
) -> None:
    events = _write(tmp_path, _event(level, "drain-window-grace-period", POD_URN))
    out = tmp_path / "comment.md"
    args = ["--stack", f"dev={_preview(tmp_path)}", "--policy-events", f"dev={events}"]
    assert main([*args, "--output", str(out)]) == code
    comment = out.read_text()
    shown = "(mandatory)" if level == "mandatory" else "(advisory)"
    assert f"> - **drain-window-grace-period** {shown} on `shell`: why (fix: how)" in comment
    assert ("Blocked by 1 mandatory policy violation(s)" in comment) == (code == 12)


def test_events_of_a_stack_not_previewed_are_bad_input(tmp_path: Path) -> None:
    events = _write(tmp_path)
    args = ["--stack", f"dev={_preview(tmp_path)}", "--policy-events", f"prod={events}"]
    assert main([*args, "--output", str(tmp_path / "c.md")]) == BAD_INPUT_EXIT


def test_a_malformed_event_log_names_the_line(tmp_path: Path) -> None:
    events = _write(tmp_path, "{not json")
    with pytest.raises(PreviewInputError, match=r"line 2 is not a JSON engine event"):
        read_policy_events(events)
