"""Post the preview: one comment per stack on the PR, edited in place on every push, and the
drift check's issue."""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from together_provider.gitops.github import GitHubClient

COMMENT_LIMIT: Final = 65_536
"""GitHub's limit on a comment's or issue's body, in characters (it answers 422 "body is too
long")."""
MARKER: Final = "<!-- together-gpu-clusters-preview stack={stack} -->"
"""Hidden first line of a stack's comment; the poster (and workflows) match it to edit the
previous comment."""
DRILL_MARKER: Final = "<!-- together-gpu-clusters-drill -->"
"""Hidden first line of the drill's section in a stack's comment: the poster keeps the section
when the preview edits the comment, and replaces only it when the drill does (`merged`)."""
CUT: Final = "cut at GitHub's comment limit"
"""The note ending a stack's comment cut to fit when even its summary is over the limit."""
LOG_CUT: Final = "cut at GitHub's comment limit; the job's log has the rest"
"""The note ending a failure comment or drift report cut to fit (they have no lists to trim)."""
DRIFT_LABEL: Final = "drift"
DRIFT_TITLE: Final = "Together clusters drifted: {stack}"


def with_marker(stack: str, section: str) -> str:
    """The stack's comment: its hidden marker line, then the rendered section."""
    return f"{MARKER.format(stack=stack)}\n{section}"


def comment(sections: Sequence[tuple[str, str]]) -> str:
    """The whole comment (stdout, --output, the step summary): each (stack, section) marked,
    in the order given."""
    return "\n---\n\n".join(with_marker(stack, section) for stack, section in sections)


def split_drill(body: str) -> tuple[str, str | None]:
    """A comment's body as (everything before the drill's section, the section or None)."""
    head, found, drill = body.partition(f"\n{DRILL_MARKER}\n")
    return (head, drill) if found else (body, None)


def with_drill(body: str, drill: str | None) -> str:
    """``body`` (a marked stack section, or the marker alone) followed by the drill's section,
    marked."""
    return body if drill is None else f"{body}\n{DRILL_MARKER}\n{drill}"


def merged(old: str, new: str) -> str:
    """What a stack's comment becomes when ``new`` is posted over ``old``: each of its two parts,
    the preview and the drill's section, from ``new`` when it has that part, else kept from
    ``old``. So the preview workflow keeps the drill's verdict, and the drill workflow (whose
    body is the marker and its section only) keeps the preview."""
    old_head, old_drill = split_drill(old)
    new_head, new_drill = split_drill(new)
    marker_only = "\n" not in new_head.strip()
    head = old_head if marker_only else new_head
    return with_drill(head, new_drill if new_drill is not None else old_drill)


def drill_alone(stack: str, drill: str) -> str:
    """The body the drill posts for ``stack``: its marker and the drill's section, no preview
    (``merged`` keeps the preview the comment already has)."""
    return with_drill(with_marker(stack, ""), drill)


def fit(body: str, limit: int = COMMENT_LIMIT, note: str = CUT) -> str:
    """``body``, or its first characters ending in ``note`` when it is over ``limit``.

    The last resort: a stack's section trims its lists first (the preview's `trim_for`) and is
    cut only when even its summary does not fit; a failure comment or a drift report has no
    lists to trim.
    """
    if len(body) <= limit:
        return body
    tail = f"\n\n<sub>({note})</sub>\n"
    return body[: limit - len(tail)] + tail


class CommentBehavior(enum.StrEnum):
    """Which comment a stack gets, after `pulumi/actions` (`edit-pr-comment`, on by default) and
    Infracost (`--behavior`).

    - ``update`` (default): edit the stack's comment in place (no edit when its body is the
      same), or create it; any further comment with the same marker (an older `new`, a create
      GitHub made but answered 5xx) is deleted, so one stays. The edit keeps the part of the
      comment the new body does not carry (`merged`): the drill's section, or the preview.
    - ``new``: always add a comment; earlier ones stay (the PR's comments are not even listed).
    - ``delete-and-new``: delete the stack's comments, then add one (it lands at the bottom).
    """

    UPDATE = "update"
    NEW = "new"
    DELETE_AND_NEW = "delete-and-new"


@dataclass(frozen=True)
class Section:
    """One stack's comment body (at most GitHub's limit) and whether it shows any change."""

    stack: str
    body: str
    has_diff: bool


def _mine(comments: Sequence[dict[str, Any]], stack: str) -> list[dict[str, Any]]:
    """The stack's comments: those whose body starts with its hidden marker (`MARKER`)."""
    marker = MARKER.format(stack=stack)
    return [c for c in comments if str(c.get("body") or "").lstrip().startswith(marker)]


def post_comments(
    client: GitHubClient,
    pr: int,
    sections: Sequence[Section],
    behavior: CommentBehavior = CommentBehavior.UPDATE,
    *,
    skip_no_diff: bool = False,
) -> list[str]:
    """Create, edit or delete each stack's comment; one line per stack saying what was done.

    The PR's comments are looked for across every page. ``skip_no_diff``: a stack without
    changes gets no new comment; under ``update`` an existing comment is still edited (figures
    from an earlier push must not stay), under ``delete-and-new`` the old ones are deleted.
    """
    existing = [] if behavior is CommentBehavior.NEW else client.issue_comments(pr)
    done = []
    for section in sections:
        mine = _mine(existing, section.stack)
        keep = mine[0] if behavior is CommentBehavior.UPDATE and mine else None
        for comment in mine:
            if comment is not keep:
                client.delete_comment(int(comment["id"]))
        body = section.body if keep is None else merged(str(keep.get("body") or ""), section.body)
        if keep is not None and keep.get("body") == body:
            done.append(f"{section.stack}: comment unchanged {keep.get('html_url')}")
        elif keep is not None:
            url = client.update_comment(int(keep["id"]), body).get("html_url")
            done.append(f"{section.stack}: edited comment {url}")
        elif skip_no_diff and not section.has_diff:
            gone = f"; deleted {len(mine)} earlier" if mine else ""
            done.append(f"{section.stack}: no changes, no comment (--skip-no-diff){gone}")
        else:
            url = client.create_comment(pr, section.body).get("html_url")
            done.append(f"{section.stack}: created comment {url}")
    return done


def open_or_update_drift_issue(
    client: GitHubClient,
    stack: str,
    body: str,
    *,
    label: str = DRIFT_LABEL,
    title: str | None = None,
) -> str:
    """Comment on the stack's open drift issue (found by label and exact title) or open one."""
    title = title or DRIFT_TITLE.format(stack=stack)
    body = fit(body, note=LOG_CUT)
    existing = [i for i in client.open_issues(label) if i.get("title") == title]
    if existing:
        number = int(existing[0]["number"])
        url = client.create_comment(number, body).get("html_url")
        return f"{stack}: commented on drift issue #{number} {url}"
    made = client.create_issue(title, body, [label])
    return f"{stack}: opened drift issue #{made.get('number')} {made.get('html_url')}"
