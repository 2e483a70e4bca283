"""A local GitHub REST contract server for the issue and comment endpoints the GitOps workflows
call, so those calls are tested against GitHub's documented answers, faults included, offline."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import socket
import threading
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Final

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from testkit import github_model as m

__all__ = ["GitHubServer", "create_app", "main"]

Handler = Callable[[Request], Awaitable[Response]]

_BANNER: Final = "github contract server listening on "


def create_app(state: m.State) -> Starlette:
    """The API routes over ``state`` plus the ``/_test`` hooks (`_hooks`).

    What it serves, after GitHub's REST reference (docs.github.com/rest, API version 2022-11-28):

    - ``/repos/{owner}/{repo}/issues``: list (``state``, ``labels``, pull requests included, as
      GitHub does) and create. "REST API endpoints for issues", docs.github.com/rest/issues/issues.
    - ``/issues/{number}/comments``: list (ascending id) and create; ``/issues/comments/{id}``:
      update, delete (204). "REST API endpoints for issue comments", docs.github.com/rest/issues/
      comments. A body over 65,536 characters is refused with 422 "body is too long (maximum is
      65536 characters)", the answer GitHub gives.
    - ``/issues/{number}/labels``: list. docs.github.com/rest/issues/labels.
    - Pagination ("Using pagination in the REST API"): ``per_page`` (default 30, at most 100) and
      ``page``; a ``Link`` header with ``prev``, ``next``, ``last`` and ``first`` whenever there
      is more than one page, none otherwise.
    - Auth ("Authenticating to the REST API"): ``Authorization: Bearer T`` or ``token T``; none is
      401 "Requires authentication", another token 401 "Bad credentials".
    - Errors ("Troubleshooting the REST API"): ``{"message", "documentation_url", "status"}``, plus
      ``errors`` on a 422 "Validation Failed"; 400 "Problems parsing JSON".
    - Rate limits ("Rate limits for the REST API"): a secondary limit is 403 with ``retry-after``
      and a message naming it; a primary one is 403 with ``x-ratelimit-remaining: 0`` and
      ``x-ratelimit-reset``.
    """

    def api(handler: Handler) -> Handler:
        async def wrapped(request: Request) -> Response:
            entry = {
                "method": request.method,
                "path": request.url.path,
                "query": str(request.url.query),
                "status": 0,
            }
            state.requests.append(entry)
            try:
                response = _fault(request)
                if response is None:
                    _auth(request)
                    response = await handler(request)
            except m.GitHubAnswer as answer:
                response = answer.response()
            entry["status"] = response.status_code
            return response

        return wrapped

    def _auth(request: Request) -> None:
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        if not token:
            raise m.GitHubAnswer(401, "Requires authentication")
        if scheme.lower() not in ("bearer", "token") or token.strip() != state.token:
            raise m.GitHubAnswer(401, "Bad credentials")

    def _fault(request: Request) -> Response | None:
        for fault in state.faults:
            if fault["count"] > 0 and fault.get("method") in (None, request.method):
                if fault.get("path") and fault["path"] not in request.url.path:
                    continue
                fault["count"] -= 1
                return m.fault_answer(fault).response()
        return None

    def params(request: Request) -> tuple[str, str]:
        return request.path_params["owner"], request.path_params["repo"]

    async def list_issues(request: Request) -> Response:
        issues = state.repo(*params(request)).values()
        wanted = request.query_params.get("state", "open")
        labels = {n for n in request.query_params.get("labels", "").split(",") if n}
        found = [i for i in issues if wanted in ("all", i["state"]) and labels <= m.labels(i)]
        return m.page(request, sorted(found, key=lambda i: -int(i["number"])))

    async def create_issue(request: Request) -> Response:
        owner, repo = params(request)
        state.repo(owner, repo)
        body = await m.body(request)
        if not isinstance(body.get("title"), str) or not body["title"]:
            raise m.invalid("Issue", "title", "missing_field")
        text = m.text(body, "Issue") if body.get("body") else None
        issue = m.new_issue(
            state, f"{owner}/{repo}", body["title"], body=text, labels=body.get("labels") or ()
        )
        return JSONResponse(m.public(issue), status_code=201)

    async def list_comments(request: Request) -> Response:
        owner, repo = params(request)
        number = state.issue(owner, repo, request.path_params["n"])["number"]
        mine = [
            c
            for c in state.comments.values()
            if (c["_repo"], c["_issue"]) == (f"{owner}/{repo}", number)
        ]
        return m.page(request, sorted(mine, key=lambda c: int(c["id"])))

    async def create_comment(request: Request) -> Response:
        owner, repo = params(request)
        number = state.issue(owner, repo, request.path_params["n"])["number"]
        text = m.text(await m.body(request), "IssueComment")
        return JSONResponse(m.public(m.new_comment(state, f"{owner}/{repo}", number, text)), 201)

    async def one_comment(request: Request) -> Response:
        comment = state.comment(*params(request), request.path_params["id"])
        if request.method == "DELETE":
            del state.comments[comment["id"]]
            state.repos[comment["_repo"]][comment["_issue"]]["comments"] -= 1
            return Response(status_code=204)
        comment.update(body=m.text(await m.body(request), "IssueComment"), updated_at=m.now())
        return JSONResponse(m.public(comment))

    async def labels(request: Request) -> Response:
        return m.page(request, state.issue(*params(request), request.path_params["n"])["labels"])

    repo = "/repos/{owner}/{repo}"
    routes = [
        Route(f"{repo}/issues", api(list_issues), methods=["GET"]),
        Route(f"{repo}/issues", api(create_issue), methods=["POST"]),
        Route(f"{repo}/issues/comments/{{id:int}}", api(one_comment), methods=["PATCH", "DELETE"]),
        Route(f"{repo}/issues/{{n:int}}/comments", api(list_comments), methods=["GET"]),
        Route(f"{repo}/issues/{{n:int}}/comments", api(create_comment), methods=["POST"]),
        Route(f"{repo}/issues/{{n:int}}/labels", api(labels), methods=["GET"]),
        *_hooks(state),
    ]
    return Starlette(routes=routes)


def _hooks(state: m.State) -> list[Route]:
    """The test hooks (no auth, never faulted, never in the request log), also as methods of
    :class:`GitHubServer`::

        POST   /_test/repos/{owner}/{repo}/pulls              {"number"?, "title"?, "labels"?}
        POST   /_test/repos/{owner}/{repo}/issues/{n}/comments {"bodies": [...], "user"?}
        PUT    /_test/repos/{owner}/{repo}/issues/{n}/labels   {"labels": [...]}
        GET|POST|DELETE /_test/faults   {"status", "count"?: 1, "method"?, "path"? (a substring),
                                         "kind"?: "status"|"secondary"|"primary", "retry_after"?,
                                         "message"?}: answer the next matching requests so
        GET|DELETE /_test/state         repositories with their issues and comments, and the
                                        request log (method, path, query, status); DELETE clears
                                        the log
    """

    async def seed_pull(request: Request) -> Response:
        body = await m.body(request)
        repo = f"{request.path_params['owner']}/{request.path_params['repo']}"
        issue = m.new_issue(
            state,
            repo,
            body.get("title", "A pull request"),
            pull=True,
            number=body.get("number"),
            labels=body.get("labels", ()),
        )
        return JSONResponse(m.public(issue), status_code=201)

    async def seed_comments(request: Request) -> Response:
        body = await m.body(request)
        owner, repo, number = (request.path_params[k] for k in ("owner", "repo", "n"))
        state.issue(owner, repo, number)
        made = [
            m.new_comment(state, f"{owner}/{repo}", number, text, body.get("user", "octocat"))
            for text in body["bodies"]
        ]
        return JSONResponse([c["id"] for c in made], status_code=201)

    async def set_labels(request: Request) -> Response:
        issue = state.issue(*(request.path_params[k] for k in ("owner", "repo", "n")))
        issue["labels"] = [m.label(n) for n in (await m.body(request))["labels"]]
        return JSONResponse(issue["labels"])

    async def faults(request: Request) -> Response:
        if request.method == "POST":
            state.faults.append({"count": 1, **await m.body(request)})
        elif request.method == "DELETE":
            state.faults.clear()
        return JSONResponse(state.faults)

    async def dump(request: Request) -> Response:
        if request.method == "DELETE":
            state.requests.clear()
        repos = {
            name: {
                "issues": [m.public(i) for i in issues.values()],
                "comments": [
                    {**m.public(c), "issue_number": c["_issue"]}
                    for c in state.comments.values()
                    if c["_repo"] == name
                ],
            }
            for name, issues in state.repos.items()
        }
        return JSONResponse({"repos": repos, "requests": state.requests})

    repo = "/_test/repos/{owner}/{repo}"
    return [
        Route(f"{repo}/pulls", seed_pull, methods=["POST"]),
        Route(f"{repo}/issues/{{n:int}}/comments", seed_comments, methods=["POST"]),
        Route(f"{repo}/issues/{{n:int}}/labels", set_labels, methods=["PUT"]),
        Route("/_test/faults", faults, methods=["GET", "POST", "DELETE"]),
        Route("/_test/state", dump, methods=["GET", "DELETE"]),
    ]


def _server(app: Starlette) -> Any:
    import uvicorn

    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
    return uvicorn.Server(config)


class GitHubServer:
    """The contract server on a free port of 127.0.0.1, in a thread of the test process.

    The socket listens before the thread starts, so the URL is usable at once. The hooks are
    plain methods; :meth:`state` returns the repositories, their issues and comments, and the
    request log (method, path, query, status) of every API call.
    """

    def __init__(self, token: str = "ghs-contract-token", repos: Sequence[str] = ("acme/gpu",)):
        self.token = token
        self._state = m.State(token=token, repos={name: {} for name in repos})
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(128)
        self.url = f"http://127.0.0.1:{self._sock.getsockname()[1]}"
        self._server = _server(create_app(self._state))
        self._thread = threading.Thread(
            target=lambda: asyncio.run(self._server.serve(sockets=[self._sock])), daemon=True
        )
        self._hooks = httpx.Client(base_url=f"{self.url}/_test", timeout=10.0)

    def __enter__(self) -> GitHubServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._hooks.close()
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self._sock.close()

    def _call(self, method: str, path: str, body: Any = None) -> Any:
        response = self._hooks.request(method, path, json=body)
        response.raise_for_status()
        return response.json()

    def seed_pull_request(self, repo: str, number: int, labels: Sequence[str] = ()) -> None:
        self._call("POST", f"/repos/{repo}/pulls", {"number": number, "labels": list(labels)})

    def seed_comments(self, repo: str, number: int, bodies: Sequence[str]) -> list[int]:
        ids: list[int] = self._call(
            "POST", f"/repos/{repo}/issues/{number}/comments", {"bodies": list(bodies)}
        )
        return ids

    def set_labels(self, repo: str, number: int, labels: Sequence[str]) -> None:
        self._call("PUT", f"/repos/{repo}/issues/{number}/labels", {"labels": list(labels)})

    def inject(self, **fault: Any) -> None:
        """Answer the next ``count`` (default 1) requests matching ``method``/``path`` (a
        substring) with ``status``; ``kind`` "secondary" (with ``retry_after``), "primary" or
        "status"; ``message`` replaces GitHub's."""
        self._call("POST", "/faults", fault)

    def clear_faults(self) -> None:
        self._call("DELETE", "/faults")

    def state(self) -> dict[str, Any]:
        state: dict[str, Any] = self._call("GET", "/state")
        return state

    def comments(self, repo: str, number: int) -> list[dict[str, Any]]:
        return [c for c in self.state()["repos"][repo]["comments"] if c["issue_number"] == number]

    def issues(self, repo: str) -> list[dict[str, Any]]:
        issues: list[dict[str, Any]] = self.state()["repos"][repo]["issues"]
        return issues

    def requests(self) -> list[dict[str, Any]]:
        requests: list[dict[str, Any]] = self.state()["requests"]
        return requests

    def clear_requests(self) -> None:
        self._call("DELETE", "/state")


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m testkit.github_server --port 0 --token T [--repo owner/name ...]`` prints one
    line, ``github contract server listening on http://HOST:PORT``; point ``GITHUB_API_URL`` at
    that URL. In tests, :class:`GitHubServer` runs it on a free port in a thread instead."""
    parser = argparse.ArgumentParser(
        prog="python -m testkit.github_server",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0: a free port")
    parser.add_argument("--token", required=True, help="the one token the API accepts")
    parser.add_argument(
        "--repo",
        action="append",
        default=[],
        metavar="OWNER/NAME",
        help="a repository that exists from the start (repeatable)",
    )
    args = parser.parse_args(argv)
    state = m.State(token=args.token, repos={name: {} for name in args.repo})
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((args.host, args.port))
    sock.listen(128)
    server = _server(create_app(state))
    print(f"{_BANNER}http://{args.host}:{sock.getsockname()[1]}", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(server.serve(sockets=[sock]))


if __name__ == "__main__":
    main()
