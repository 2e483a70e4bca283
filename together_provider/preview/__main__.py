"""Command line of the PR preview: render `pulumi preview --json` of one or more stacks as a PR
comment, or post it (`--github-pr`), exiting with what the PR does so that CI can gate on it."""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from together_api.retry import Clock, Sleep
from together_provider.gitops.post import (
    CommentBehavior,
    comment,
    drill_alone,
    with_drill,
)
from together_provider.preview import inputs
from together_provider.preview.commands import drift_issue, post_to_pr
from together_provider.preview.markdown import render_stack
from together_provider.preview.plan import BAD_INPUT_EXIT, Outcome
from together_provider.preview_parts.prices import (
    DEFAULT_PRICES_FILE,
    PreviewInputError,
    load_price_table,
)

_EPILOG = """\
examples:
  pulumi preview --json --show-sames --stack dev --policy-pack policy \\
      --event-log dev.events > dev.json
  python -m together_provider.preview --stack dev=dev.json --policy-events dev=dev.events \\
      --output comment.md
  python -m together_provider.preview --stack dev=dev.json --github-pr 42
  python -m together_provider.preview drift-issue --stack dev --report report.md
      (opens or comments on the drift check's issue; see drift-issue --help)
  python -m together_provider.preview --drill drill.json --drill-stack dev --github-pr 42
      (edits the drill's verdict, from python -m together_drill --json drill.json, into dev's
      comment; its preview stays)

exit codes (the most severe stack's; 2 and 13 win over the others):
  0   no changes
  10  changes: creates or in-place updates only
  11  a replacement or deletion is present: require the approval label
  12  blocked: a spec was rejected at check, a mandatory policy was violated, the preview
      failed, or the cost rises past --max-hourly-increase / --max-monthly-increase (on
      placeholder rates only when the stack sets <project>:failOnPlaceholderPrices: true;
      otherwise the comment warns and the exit code is the change's)
  2   bad input (unreadable or malformed JSON, another project's preview, an unpriced GPU
      type, bad flags); nothing is written, except with --github-pr, where the stack's
      comment says its preview failed
  13  GitHub refused or could not take the comment or issue (--github-pr, drift-issue), or
      GITHUB_TOKEN / GITHUB_REPOSITORY are not set; the message says why
"""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m together_provider.preview",
        description="Render `pulumi preview --json` output as a Markdown PR comment with GPU "
        "and cost deltas per Together cluster.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    groups: dict[str | None, argparse._ActionsContainer] = {None: parser}
    for title, flag, settings in _OPTIONS:
        if title not in groups:
            groups[title] = parser.add_argument_group(title)
        groups[title].add_argument(flag, **settings)
    return parser


def _usd(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an amount in USD, got {text!r}") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more USD, got {text!r}")
    return value


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a pull request number, got {text!r}")
    return int(text)


_GUARDRAILS: Final = (
    "cost guardrails (a crossing stack is blocked, exit 12; on placeholder rates it is only "
    "warned, unless <project>:failOnPlaceholderPrices is true)"
)
_GITHUB: Final = "posting to a pull request (GITHUB_REPOSITORY, GITHUB_TOKEN, GITHUB_API_URL)"
_DRILL: Final = (
    "the reclaim drill's verdict (python -m together_drill --json REPORT.json; "
    "docs/drill.md): a short section at the end of the stack's comment"
)

_OPTIONS: Final[tuple[tuple[str | None, str, dict[str, Any]], ...]] = (
    (
        None,
        "files",
        dict(
            nargs="*",
            metavar="FILE",
            help="preview JSON; the stack name comes from its URNs (default: stdin)",
        ),
    ),
    (
        None,
        "--stack",
        dict(
            action="append",
            default=[],
            metavar="NAME=FILE",
            help="preview JSON of the stack NAME (repeatable; FILE may be - for stdin)",
        ),
    ),
    (
        None,
        "--policy-events",
        dict(
            action="append",
            default=[],
            metavar="NAME=FILE",
            help="the event log of stack NAME's preview (`pulumi preview --event-log FILE`): its "
            "policy violations are listed, and a mandatory one blocks (repeatable)",
        ),
    ),
    (
        None,
        "--prices",
        dict(
            type=Path,
            default=DEFAULT_PRICES_FILE,
            metavar="FILE",
            help="on-demand price table replacing the bundled one (same shape as prices.json)",
        ),
    ),
    (
        None,
        "--output",
        dict(
            type=Path,
            metavar="FILE",
            help="write the comment here, atomically (default: stdout)",
        ),
    ),
    (
        None,
        "--approval-label",
        dict(
            default="approve-replacement",
            help="the PR label the comment asks for on replacements and deletions",
        ),
    ),
    (
        _GUARDRAILS,
        "--max-hourly-increase",
        dict(
            type=_usd,
            metavar="USD",
            help="largest allowed rise of a stack's cluster cost per hour",
        ),
    ),
    (
        _GUARDRAILS,
        "--max-monthly-increase",
        dict(
            type=_usd,
            metavar="USD",
            help="largest allowed rise per month (clusters over 730 h plus volume storage)",
        ),
    ),
    (
        _GITHUB,
        "--github-pr",
        dict(
            type=_positive,
            metavar="N",
            help="post or update one comment per stack on pull request N; with "
            "GITHUB_STEP_SUMMARY set, the whole comment is appended there too",
        ),
    ),
    (
        _GITHUB,
        "--comment-behavior",
        dict(
            choices=[b.value for b in CommentBehavior],
            default=CommentBehavior.UPDATE.value,
            help="update: edit the stack's comment in place (default); new: always add one; "
            "delete-and-new: delete the old ones, then add one",
        ),
    ),
    (
        _GITHUB,
        "--skip-no-diff",
        dict(
            action="store_true",
            help="post no new comment for a stack without changes (an existing one is still "
            "updated, or deleted under delete-and-new)",
        ),
    ),
    (
        _GITHUB,
        "--preview-log",
        dict(
            action="append",
            default=[],
            metavar="NAME=FILE",
            help="pulumi's stderr of stack NAME: when its preview JSON cannot be read, the "
            "comment shows the end of it (repeatable)",
        ),
    ),
    (
        _DRILL,
        "--drill",
        dict(
            type=Path,
            metavar="REPORT.json",
            help="the drill's JSON report; without any preview, only the drill's section is "
            "rendered, or with --github-pr edited into the stack's comment (its preview kept)",
        ),
    ),
    (
        _DRILL,
        "--drill-stack",
        dict(
            metavar="NAME",
            help="the stack whose comment gets the section (default: the one stack previewed)",
        ),
    ),
    (
        _DRILL,
        "--drill-url",
        dict(
            metavar="URL",
            help="where the full report is (the workflow's artifact), linked from the section",
        ),
    ),
)
"""The CLI's arguments, each with its group (None: ungrouped) and `add_argument` settings, in
`--help` order."""


def main(
    argv: Sequence[str] | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    sleep: Sleep = time.sleep,
    clock: Clock = time.monotonic,
) -> int:
    """The CLI; ``environ``, ``sleep`` and ``clock`` (GitHub retries and their deadline) are
    the process's unless given."""
    argv = list(sys.argv[1:] if argv is None else argv)
    env = os.environ if environ is None else environ
    if argv[:1] == ["drift-issue"]:
        return drift_issue(argv[1:], env, sleep, clock)
    args = _parser().parse_args(argv)
    if args.github_pr is not None:
        return post_to_pr(args, env, sleep, clock)
    try:
        if inputs.drill_only(args):
            verdicts = []
            text = drill_alone(*inputs.drill_only_section(args))
        else:
            prices = load_price_table(args.prices)
            verdicts = inputs.judge(
                inputs.load_plans(inputs.input_pairs(args), prices),
                args,
                inputs.policy_events(args),
            )
            found = inputs.drill_section(args, [v.stack for v in verdicts])
            sections = [
                (
                    v.stack,
                    with_drill(
                        render_stack(v, args.approval_label), inputs.drill_of(v.stack, found)
                    ),
                )
                for v in verdicts
            ]
            text = comment(sections)
        if args.output is None:
            sys.stdout.write(text)
        else:
            inputs.write_atomically(args.output, text)
    except PreviewInputError as error:
        print(f"error: {error}", file=sys.stderr)
        return BAD_INPUT_EXIT
    except OSError as error:
        print(f"error: cannot write {args.output}: {error.strerror}", file=sys.stderr)
        return BAD_INPUT_EXIT
    outcome = max((verdict.outcome for verdict in verdicts), default=Outcome.NO_CHANGES)
    for verdict in verdicts:
        print(
            f"{verdict.stack}: {verdict.outcome.name.lower()} (exit {verdict.outcome.value})",
            file=sys.stderr,
        )
    return int(outcome)


if __name__ == "__main__":
    sys.exit(main())
