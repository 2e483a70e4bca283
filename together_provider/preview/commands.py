"""The CLI's GitHub commands (with `__main__`, where the comment meets the poster): `--github-pr`
posts each stack's comment, `drift-issue` the drift issue. A GitHub failure is exit 13 (its
`GITHUB_ERROR_EXIT`) with a message naming the call, GitHub's answer and the fix (no token)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from together_api.retry import Clock, Sleep
from together_provider.gitops.github import GitHubClient, GitHubError, GitHubSettings
from together_provider.gitops.post import (
    COMMENT_LIMIT,
    DRIFT_LABEL,
    DRILL_MARKER,
    LOG_CUT,
    CommentBehavior,
    Section,
    comment,
    drill_alone,
    fit,
    open_or_update_drift_issue,
    post_comments,
    with_drill,
    with_marker,
)
from together_provider.preview.drill import DRILL_SECTION_LIMIT
from together_provider.preview.inputs import (
    STDIN,
    drill_of,
    drill_only,
    drill_only_section,
    drill_section,
    input_pairs,
    judge,
    named_files,
    policy_events,
    read_json,
    write_atomically,
)
from together_provider.preview.markdown import Trim, render_failure, render_stack
from together_provider.preview.plan import BAD_INPUT_EXIT, Outcome, StackPlan, build_plan
from together_provider.preview.verdict import Verdict
from together_provider.preview_parts.prices import PreviewInputError, PriceTable, load_price_table

DRILL_ROOM: Final = len(DRILL_MARKER) + 2 + DRILL_SECTION_LIMIT
"""What a stack's preview leaves of GitHub's limit for the drill's marked section:
the preview is trimmed to ``COMMENT_LIMIT - DRILL_ROOM``, so the two always fit together."""
STACK_LIMIT: Final = COMMENT_LIMIT - DRILL_ROOM
"""What a stack's marked preview may take of its comment: the rest is the drill's room."""


def trim_for(stack: str) -> Trim:
    """What the stack's section must keep to so that, marked, it fits one GitHub comment with
    room left for the drill's section (at most `DRILL_SECTION_LIMIT`)."""
    return Trim(
        limit=STACK_LIMIT - len(with_marker(stack, "")),
        why=f"fit GitHub's {COMMENT_LIMIT:,}-character comment limit",
        whole="The job's step summary has the whole comment.",
    )


GITHUB_ERROR_EXIT: Final = 13
"""Exit code when GitHub refused or could not take the comment or issue (`--github-pr`,
`drift-issue`), or GITHUB_TOKEN / GITHUB_REPOSITORY are not set."""


@dataclass(frozen=True)
class _Unreadable:
    """A stack whose preview JSON could not be read: its comment says why (exit 2)."""

    stack: str
    error: str


def _read_stack(name: str | None, path: str, prices: PriceTable) -> StackPlan | _Unreadable:
    where = "<stdin>" if path == STDIN else path
    try:
        return build_plan(read_json(path), where, prices, name)
    except PreviewInputError as error:
        print(f"error: {error}", file=sys.stderr)
        return _Unreadable(name or where, str(error))


def _log(logs: Mapping[str, Path], stack: str) -> str | None:
    if stack not in logs:
        return None
    try:
        return logs[stack].read_text(encoding="utf-8", errors="replace")
    except OSError as error:
        return f"(cannot read {logs[stack]}: {error.strerror})"


def post_to_pr(
    args: argparse.Namespace, environ: Mapping[str, str], sleep: Sleep, clock: Clock
) -> int:
    """`--github-pr N`: render each stack, post its comment, append the step summary."""
    try:
        settings = GitHubSettings.from_env(environ)
    except GitHubError as error:
        print(f"error: {error}", file=sys.stderr)
        return GITHUB_ERROR_EXIT
    if drill_only(args):
        return _post_drill(args, environ, settings, sleep, clock)
    try:
        prices, logs = load_price_table(args.prices), named_files(args.preview_log, "--preview-log")
        read = [_read_stack(name, path, prices) for name, path in input_pairs(args)]
        drill = drill_section(args, [item.stack for item in read])
        good = [plan for plan in read if isinstance(plan, StackPlan)]
        events = {
            k: v
            for k, v in policy_events(args).items()
            if k not in {s.stack for s in read if isinstance(s, _Unreadable)}
        }
        verdicts = judge(good, args, events)
    except PreviewInputError as error:
        print(f"error: {error}", file=sys.stderr)
        return BAD_INPUT_EXIT
    for verdict in verdicts:
        outcome = verdict.outcome
        print(f"{verdict.stack}: {outcome.name.lower()} (exit {outcome.value})", file=sys.stderr)
    with GitHubClient(settings, sleep=sleep, clock=clock) as client:
        try:
            return _render_and_post(args, environ, client, read, verdicts, logs, drill)
        except GitHubError as error:
            print(f"error: the comment was not posted: {error}", file=sys.stderr)
            return GITHUB_ERROR_EXIT


def _post_drill(
    args: argparse.Namespace,
    environ: Mapping[str, str],
    settings: GitHubSettings,
    sleep: Sleep,
    clock: Clock,
) -> int:
    """`--drill FILE --github-pr N` without a preview: edit the drill's section into the stack's
    comment (its preview kept, `merged`), or create the comment with the section alone."""
    try:
        stack, drill = drill_only_section(args)
    except PreviewInputError as error:
        print(f"error: {error}", file=sys.stderr)
        return BAD_INPUT_EXIT
    try:
        _append_summary(environ, drill)
    except OSError as error:
        print(f"error: cannot write {error.filename}: {error.strerror}", file=sys.stderr)
        return BAD_INPUT_EXIT
    section = Section(stack, drill_alone(stack, drill), has_diff=True)
    with GitHubClient(settings, sleep=sleep, clock=clock) as client:
        try:
            done = post_comments(client, args.github_pr, [section], CommentBehavior.UPDATE)
        except GitHubError as error:
            print(f"error: the drill's section was not posted: {error}", file=sys.stderr)
            return GITHUB_ERROR_EXIT
    print("\n".join(done), file=sys.stderr)
    return 0


def _append_summary(environ: Mapping[str, str], text: str) -> None:
    """Append ``text`` to the job's step summary, where Actions gives one (OSError is the
    caller's: it names the file and exits as bad input)."""
    if environ.get("GITHUB_STEP_SUMMARY"):
        with open(environ["GITHUB_STEP_SUMMARY"], "a", encoding="utf-8") as summary:
            summary.write(text + "\n")


def _render_and_post(
    args: argparse.Namespace,
    environ: Mapping[str, str],
    client: GitHubClient,
    read: Sequence[StackPlan | _Unreadable],
    verdicts: Sequence[Verdict],
    logs: Mapping[str, Path],
    drill: tuple[str, str] | None,
) -> int:
    """Render every stack (the drill's section after its stack's), write --output and the step
    summary, then post the comments."""
    replaced = any(verdict.outcome is Outcome.REPLACEMENT for verdict in verdicts)
    approved = replaced and args.approval_label in client.labels(args.github_pr)
    sections: list[Section] = []
    whole: list[tuple[str, str]] = []  # each stack's section untrimmed: --output, the summary
    label = args.approval_label
    by_stack = iter(verdicts)
    for item in read:
        section = drill_of(item.stack, drill)
        if isinstance(item, _Unreadable):
            failed = render_failure(item.stack, item.error, _log(logs, item.stack))
            body = fit(with_marker(item.stack, failed), STACK_LIMIT, LOG_CUT)
            sections.append(Section(item.stack, with_drill(body, section), has_diff=True))
            whole.append((item.stack, with_drill(failed, section)))
            continue
        verdict = next(by_stack)
        rendered = render_stack(verdict, label, approved=approved)
        whole.append((verdict.stack, with_drill(rendered, section)))
        body = with_marker(verdict.stack, rendered)
        if len(body) > STACK_LIMIT:  # rendered again only to trim its lists
            trimmed = render_stack(verdict, label, trim_for(verdict.stack), approved=approved)
            body = fit(with_marker(verdict.stack, trimmed), STACK_LIMIT)
        changed = verdict.outcome is not Outcome.NO_CHANGES
        sections.append(Section(verdict.stack, with_drill(body, section), changed))
    text = comment(whole)
    try:
        if args.output is not None:
            write_atomically(args.output, text)
        _append_summary(environ, text)
    except OSError as error:
        print(f"error: cannot write {error.filename}: {error.strerror}", file=sys.stderr)
        return BAD_INPUT_EXIT
    behavior = CommentBehavior(args.comment_behavior)
    done = post_comments(client, args.github_pr, sections, behavior, skip_no_diff=args.skip_no_diff)
    print("\n".join(done), file=sys.stderr)
    if len(verdicts) < len(read):
        return BAD_INPUT_EXIT
    return int(max((verdict.outcome for verdict in verdicts), default=Outcome.NO_CHANGES))


def _drift_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m together_provider.preview drift-issue",
        description="Open the stack's drift issue, or comment on it when one is open (found by "
        "its label and exact title), through GitHub's REST API.",
        epilog="exit codes: 0 done, 2 bad input, 13 GitHub error",
    )
    parser.add_argument("--stack", required=True, help="the stack that drifted")
    parser.add_argument(
        "--report",
        type=Path,
        required=True,
        metavar="FILE",
        help="the issue or comment body (Markdown), e.g. the rendered preview",
    )
    parser.add_argument(
        "--pulumi-exit",
        type=int,
        metavar="CODE",
        help="pulumi preview's exit code, named in the body",
    )
    parser.add_argument("--label", default=DRIFT_LABEL, help="the issue's label (default drift)")
    parser.add_argument(
        "--title", help="the issue's title (default: Together clusters drifted: STACK)"
    )
    return parser


def drift_issue(argv: Sequence[str], environ: Mapping[str, str], sleep: Sleep, clock: Clock) -> int:
    """`drift-issue`: the drift workflow's issue, through the same client as the PR comment."""
    args = _drift_parser().parse_args(argv)
    try:
        report = args.report.read_text(encoding="utf-8", errors="replace")
    except OSError as error:
        print(f"error: --report {args.report}: cannot read: {error.strerror}", file=sys.stderr)
        return BAD_INPUT_EXIT
    run = [environ.get(k) for k in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID")]
    where = f", {run[0]}/{run[1]}/actions/runs/{run[2]}" if all(run) else ""
    code = "" if args.pulumi_exit is None else f" (pulumi exit {args.pulumi_exit})"
    body = f"Drift check of `{args.stack}` failed{code}{where}\n\n{report}"
    try:
        settings = GitHubSettings.from_env(environ)
        with GitHubClient(settings, sleep=sleep, clock=clock) as client:
            done = open_or_update_drift_issue(
                client, args.stack, body, label=args.label, title=args.title
            )
    except GitHubError as error:
        print(f"error: the drift issue was not posted: {error}", file=sys.stderr)
        return GITHUB_ERROR_EXIT
    print(done, file=sys.stderr)
    return 0
