"""The preview CLI's inputs: which files, read into plans and judged into verdicts, and atomic
output. Shared by the plain CLI (`__main__`) and the GitOps commands (`commands`)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from together_provider.preview.drill import read_drill_report, render_drill
from together_provider.preview.plan import StackPlan, build_plan
from together_provider.preview.policy import read_policy_events
from together_provider.preview.verdict import Verdict
from together_provider.preview_parts.guardrails import breaches
from together_provider.preview_parts.prices import PreviewInputError, PriceTable

STDIN = "-"


def input_pairs(args: argparse.Namespace) -> list[tuple[str | None, str]]:
    """(explicit stack name or None, path or '-') pairs, in the order given."""
    pairs: list[tuple[str | None, str]] = []
    for item in args.stack:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise PreviewInputError("--stack", f"expected NAME=FILE, got {item!r}")
        pairs.append((name, path))
    pairs += [(None, path) for path in args.files]
    return pairs or [(None, STDIN)]


def read_json(path: str) -> Any:
    where = "<stdin>" if path == STDIN else path
    try:
        text = sys.stdin.read() if path == STDIN else Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise PreviewInputError(where, f"cannot read: {error.strerror}") from None
    if not text.strip():
        raise PreviewInputError(
            where,
            "empty: `pulumi preview --json` printed nothing",
            fix="read the preview's stderr; it failed before printing its JSON document",
        )
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise PreviewInputError(
            where,
            f"malformed or truncated JSON ({error.msg} at line {error.lineno} "
            f"column {error.colno})",
        ) from None


def load_plans(pairs: Sequence[tuple[str | None, str]], prices: PriceTable) -> list[StackPlan]:
    """One plan per input; the first bad input stops everything (no partial comment)."""
    return [
        build_plan(read_json(path), "<stdin>" if path == STDIN else path, prices, name)
        for name, path in pairs
    ]


def judge(
    plans: Sequence[StackPlan], args: argparse.Namespace, policy_events: Mapping[str, Path]
) -> list[Verdict]:
    """Each plan's verdict, built whole: its stack's policy violations (an event log of no
    given stack is bad input) and the cost thresholds it crosses."""
    events = dict(policy_events)
    unknown = events.keys() - {plan.stack for plan in plans}
    if unknown:
        raise PreviewInputError(
            "--policy-events", f"no preview of stack {sorted(unknown)[0]!r} was given"
        )
    limits = (args.max_hourly_increase, args.max_monthly_increase)
    return [
        Verdict(
            plan,
            policy=read_policy_events(events[plan.stack]) if plan.stack in events else (),
            guardrails=breaches(plan, *limits),
        )
        for plan in plans
    ]


def named_files(items: Sequence[str], flag: str) -> dict[str, Path]:
    files: dict[str, Path] = {}
    for item in items:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise PreviewInputError(flag, f"expected NAME=FILE, got {item!r}")
        files[name] = Path(path)
    return files


def policy_events(args: argparse.Namespace) -> dict[str, Path]:
    return named_files(args.policy_events, "--policy-events")


def write_atomically(path: Path, text: str) -> None:
    """Write via a temp file in the same directory and rename: readers never see half a file."""
    handle, temp = tempfile.mkstemp(dir=path.parent or Path("."), prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def drill_only(args: argparse.Namespace) -> bool:
    """`--drill` without any preview: only the drill's section is rendered (or posted, edited
    into the stack's comment, whose preview stays), and stdin is not read."""
    return args.drill is not None and not args.stack and not args.files


def drill_of(stack: str, found: tuple[str, str] | None) -> str | None:
    """The drill's section if ``stack``'s comment gets it (``found``: :func:`drill_section`)."""
    return found[1] if found is not None and found[0] == stack else None


def drill_only_section(args: argparse.Namespace) -> tuple[str, str]:
    """(stack, the drill's section) when :func:`drill_only`: ``--drill`` was given, so there
    is one (bad input raises, as in :func:`drill_section`)."""
    found = drill_section(args, [])
    assert found is not None, "drill_only: --drill was given"
    return found


def drill_section(args: argparse.Namespace, stacks: Sequence[str]) -> tuple[str, str] | None:
    """(the stack whose comment gets it, the drill's section) for `--drill FILE`, or None.

    The stack is `--drill-stack`, or the one stack previewed; anything else is bad input that
    names the flag and the fix."""
    if args.drill is None:
        extra = [
            f
            for f, v in (("--drill-stack", args.drill_stack), ("--drill-url", args.drill_url))
            if v
        ]
        if extra:
            raise PreviewInputError(
                " and ".join(extra), "goes with --drill FILE (the drill's JSON report)"
            )
        return None
    if args.drill_stack is not None and stacks and args.drill_stack not in stacks:
        raise PreviewInputError(
            "--drill-stack",
            f"{args.drill_stack!r} is not a stack previewed here ({', '.join(stacks)})",
            fix="name one of them, or leave out the previews to post the drill's section alone",
        )
    stack = args.drill_stack or (stacks[0] if len(stacks) == 1 else None)
    if stack is None:
        raise PreviewInputError(
            "--drill",
            f"which stack's comment gets the drill's verdict? {len(stacks)} previews were given",
            fix="add --drill-stack NAME",
        )
    return stack, render_drill(read_drill_report(args.drill), args.drill_url)
