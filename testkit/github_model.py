"""The contract server's state and GitHub's answer shapes (issues, comments, pages, errors), apart
from the routes (`testkit.github_server.create_app`, which cites GitHub's REST docs)."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from starlette.requests import Request
from starlette.responses import JSONResponse

BODY_LIMIT: Final = 65_536
DOCS: Final = "https://docs.github.com/rest"
BOT: Final = "github-actions[bot]"


class GitHubAnswer(Exception):
    """An error answer in GitHub's shape."""

    def __init__(self, status: int, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status, self.message, self.extra = status, message, extra
        self.headers: dict[str, str] = extra.pop("headers", {})

    def response(self) -> JSONResponse:
        body = {"message": self.message, **self.extra, "documentation_url": DOCS}
        body["status"] = str(self.status)
        return JSONResponse(body, status_code=self.status, headers=self.headers)


def invalid(resource: str, field_: str, code: str, message: str | None = None) -> GitHubAnswer:
    error = {"resource": resource, "code": code, "field": field_}
    return GitHubAnswer(422, "Validation Failed", errors=[{**error, "message": message}])


@dataclass
class State:
    """Everything the server holds; only the event loop's thread touches it."""

    token: str
    repos: dict[str, dict[int, dict[str, Any]]] = field(default_factory=dict)
    comments: dict[int, dict[str, Any]] = field(default_factory=dict)
    faults: list[dict[str, Any]] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    next_id: int = 1000

    def new_id(self) -> int:
        self.next_id += 1
        return self.next_id

    def repo(self, owner: str, name: str) -> dict[int, dict[str, Any]]:
        issues = self.repos.get(f"{owner}/{name}")
        if issues is None:
            raise GitHubAnswer(404, "Not Found")
        return issues

    def issue(self, owner: str, name: str, number: int) -> dict[str, Any]:
        issue = self.repo(owner, name).get(number)
        if issue is None:
            raise GitHubAnswer(404, "Not Found")
        return issue

    def comment(self, owner: str, name: str, comment_id: int) -> dict[str, Any]:
        comment = self.comments.get(comment_id)
        if comment is None or comment["_repo"] != f"{owner}/{name}":
            raise GitHubAnswer(404, "Not Found")
        return comment


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def label(name: str) -> dict[str, Any]:
    return {"id": abs(hash(name)) % 10**9, "name": name, "color": "ededed", "default": False}


def new_issue(
    state: State,
    repo: str,
    title: str,
    *,
    body: str | None = None,
    labels: Sequence[str] = (),
    pull: bool = False,
    number: int | None = None,
    user: str = BOT,
) -> dict[str, Any]:
    issues = state.repos.setdefault(repo, {})
    number = number or max(issues, default=0) + 1
    kind = "pull" if pull else "issues"
    issue: dict[str, Any] = {
        "id": state.new_id(),
        "number": number,
        "title": title,
        "body": body,
        "state": "open",
        "labels": [label(n) for n in dict.fromkeys(labels)],
        "user": {"login": user},
        "comments": 0,
        "html_url": f"https://github.com/{repo}/{kind}/{number}",
        "url": f"https://api.github.com/repos/{repo}/issues/{number}",
        "created_at": now(),
        "updated_at": now(),
    }
    if pull:
        issue["pull_request"] = {"url": f"https://api.github.com/repos/{repo}/pulls/{number}"}
    issues[number] = issue
    return issue


def new_comment(state: State, repo: str, number: int, body: str, user: str = BOT) -> dict[str, Any]:
    comment_id = state.new_id()
    comment = {
        "id": comment_id,
        "body": body,
        "user": {"login": user, "type": "Bot"},
        "html_url": f"https://github.com/{repo}/pull/{number}#issuecomment-{comment_id}",
        "issue_url": f"https://api.github.com/repos/{repo}/issues/{number}",
        "created_at": now(),
        "updated_at": now(),
        "_repo": repo,
        "_issue": number,
    }
    state.comments[comment_id] = comment
    state.repos[repo][number]["comments"] += 1
    return comment


def public(item: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in item.items() if not k.startswith("_")}


def page(request: Request, items: Sequence[dict[str, Any]]) -> JSONResponse:
    """One page of ``items`` with GitHub's ``Link`` header."""

    def number(name: str, default: int) -> int:
        value = request.query_params.get(name, "")
        return int(value) if value.isdigit() and int(value) > 0 else default

    per_page, page = min(number("per_page", 30), 100), number("page", 1)
    last = max(1, math.ceil(len(items) / per_page))
    links = []
    for rel, target in (("prev", page - 1), ("next", page + 1), ("last", last), ("first", 1)):
        if (rel in ("prev", "first") and page > 1) or (rel in ("next", "last") and page < last):
            links.append(f'<{request.url.include_query_params(page=target)}>; rel="{rel}"')
    chunk = items[(page - 1) * per_page : page * per_page]
    headers = {"link": ", ".join(links)} if links else {}
    return JSONResponse([public(i) for i in chunk], headers=headers)


async def body(request: Request) -> dict[str, Any]:
    try:
        body = json.loads(await request.body() or b"{}")
    except ValueError:
        raise GitHubAnswer(400, "Problems parsing JSON") from None
    if not isinstance(body, dict):
        raise GitHubAnswer(400, "Problems parsing JSON")
    return body


def text(body: dict[str, Any], resource: str) -> str:
    text = body.get("body")
    if not isinstance(text, str) or not text:
        raise invalid(resource, "body", "missing_field")
    if len(text) > BODY_LIMIT:
        raise invalid(resource, "body", "custom", "body is too long (maximum is 65536 characters)")
    return text


def labels(issue: dict[str, Any]) -> set[str]:
    return {label["name"] for label in issue["labels"]}


def fault_answer(fault: dict[str, Any]) -> GitHubAnswer:
    kind, status = fault.get("kind", "status"), int(fault.get("status", 502))
    headers = {}
    if kind == "secondary":
        message = (
            "You have exceeded a secondary rate limit. Please wait a few minutes before "
            "you try again."
        )
        if fault.get("retry_after") is not None:
            headers["retry-after"] = str(fault["retry_after"])
    elif kind == "primary":
        message = "API rate limit exceeded for installation."
        reset = int(time.time()) + int(fault.get("reset_in", 3600))
        headers = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(reset)}
    else:
        message = "Server Error" if status >= 500 else "Forbidden"
    return GitHubAnswer(status, fault.get("message") or message, headers=headers)
