"""Command line: render `pulumi preview --json` output of one or more stacks as a PR comment.

    pulumi preview --json --stack dev --policy-pack policy --event-log dev.events > dev.json
    python -m together_provider.preview --stack dev=dev.json --policy-events dev=dev.events \
        --output comment.md

Exit codes (the most severe stack wins):
    0   no changes
    10  changes: creates or in-place updates only
    11  a replacement or deletion is present: require the approval label
    12  blocked: a spec was rejected at check, a mandatory policy was violated, or the preview
        failed
    2   bad input (unreadable or malformed JSON, another project's preview, an unpriced GPU
        type, bad flags); nothing is written
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from together_provider.preview.markdown import render
from together_provider.preview.plan import BAD_INPUT_EXIT, Outcome, StackPlan, build_plan
from together_provider.preview.policy import read_policy_events
from together_provider.preview.prices import (
    DEFAULT_PRICES_FILE,
    PreviewInputError,
    PriceTable,
    load_price_table,
)

STDIN = "-"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m together_provider.preview",
        description="Render `pulumi preview --json` output as a Markdown PR comment with GPU "
        "and cost deltas per Together cluster.",
        epilog="exit codes: 0 no changes, 10 changes, 11 replacement or deletion, 12 blocked, "
        "2 bad input",
    )
    parser.add_argument(
        "files",
        nargs="*",
        metavar="FILE",
        help="preview JSON; the stack name comes from its URNs (default: stdin)",
    )
    parser.add_argument(
        "--stack",
        action="append",
        default=[],
        metavar="NAME=FILE",
        help="preview JSON of the stack NAME (repeatable; FILE may be - for stdin)",
    )
    parser.add_argument(
        "--policy-events",
        action="append",
        default=[],
        metavar="NAME=FILE",
        help="the event log of stack NAME's preview (`pulumi preview --event-log FILE`): its "
        "policy violations are listed, and a mandatory one blocks (repeatable)",
    )
    parser.add_argument(
        "--prices",
        type=Path,
        default=DEFAULT_PRICES_FILE,
        metavar="FILE",
        help="on-demand price table replacing the bundled one (same shape as prices.json)",
    )
    parser.add_argument(
        "--output",
        type=Path,
        metavar="FILE",
        help="write the comment here, atomically (default: stdout)",
    )
    parser.add_argument(
        "--approval-label",
        default="approve-replacement",
        help="the PR label the comment asks for on replacements and deletions",
    )
    return parser


def _inputs(args: argparse.Namespace) -> list[tuple[str | None, str]]:
    """(explicit stack name or None, path or '-') pairs, in the order given."""
    pairs: list[tuple[str | None, str]] = []
    for item in args.stack:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise PreviewInputError("--stack", f"expected NAME=FILE, got {item!r}")
        pairs.append((name, path))
    pairs += [(None, path) for path in args.files]
    return pairs or [(None, STDIN)]


def _read(path: str) -> Any:
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


def load_plans(
    pairs: Sequence[tuple[str | None, str]],
    prices: PriceTable,
    policy_events: Mapping[str, Path] | None = None,
) -> list[StackPlan]:
    """One plan per input; the first bad input stops everything (no partial comment)."""
    plans = [
        build_plan(_read(path), "<stdin>" if path == STDIN else path, prices, name)
        for name, path in pairs
    ]
    events = dict(policy_events or {})
    unknown = events.keys() - {plan.stack for plan in plans}
    if unknown:
        raise PreviewInputError(
            "--policy-events", f"no preview of stack {sorted(unknown)[0]!r} was given"
        )
    return [
        dataclasses.replace(plan, policy=read_policy_events(events[plan.stack]))
        if plan.stack in events
        else plan
        for plan in plans
    ]


def _policy_events(args: argparse.Namespace) -> dict[str, Path]:
    events: dict[str, Path] = {}
    for item in args.policy_events:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise PreviewInputError("--policy-events", f"expected NAME=FILE, got {item!r}")
        events[name] = Path(path)
    return events


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


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        plans = load_plans(_inputs(args), load_price_table(args.prices), _policy_events(args))
        comment = render(plans, args.approval_label)
        if args.output is None:
            sys.stdout.write(comment)
        else:
            write_atomically(args.output, comment)
    except PreviewInputError as error:
        print(f"error: {error}", file=sys.stderr)
        return BAD_INPUT_EXIT
    except OSError as error:
        print(f"error: cannot write {args.output}: {error.strerror}", file=sys.stderr)
        return BAD_INPUT_EXIT
    outcome = max((plan.outcome for plan in plans), default=Outcome.NO_CHANGES)
    for plan in plans:
        print(
            f"{plan.stack}: {plan.outcome.name.lower()} (exit {plan.outcome.value})",
            file=sys.stderr,
        )
    return int(outcome)


if __name__ == "__main__":
    sys.exit(main())
