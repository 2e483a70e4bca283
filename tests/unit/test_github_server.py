"""The GitHub contract server answers as GitHub's REST docs say (testkit/github_server.py)."""

from __future__ import annotations

import select
import subprocess
import sys
from collections.abc import Iterator

import httpx
import pytest

from testkit.github_server import GitHubServer

REPO = "acme/gpu"


@pytest.fixture
def github() -> Iterator[GitHubServer]:
    with GitHubServer(token="ghs-t", repos=[REPO]) as server:
        server.seed_pull_request(REPO, 7)
        yield server


def _client(server: GitHubServer, scheme: str = "Bearer") -> httpx.Client:
    return httpx.Client(base_url=server.url, headers={"Authorization": f"{scheme} ghs-t"})


def test_comments_page_with_a_link_header_like_githubs(github: GitHubServer) -> None:
    github.seed_comments(REPO, 7, [f"c{i}" for i in range(5)])
    with _client(github) as client:
        first = client.get(f"/repos/{REPO}/issues/7/comments", params={"per_page": 2})
        middle = client.get(first.links["next"]["url"])
        last = client.get(middle.links["last"]["url"])
    assert [c["body"] for c in first.json()] == ["c0", "c1"]
    assert set(first.links) == {"next", "last"}
    assert [c["body"] for c in middle.json()] == ["c2", "c3"]
    assert set(middle.links) == {"prev", "next", "last", "first"}
    assert [c["body"] for c in last.json()] == ["c4"]
    assert set(last.links) == {"prev", "first"}


def test_auth_accepts_bearer_and_token_and_refuses_the_rest(github: GitHubServer) -> None:
    path = f"/repos/{REPO}/issues/7/labels"
    assert _client(github, "token").get(path).status_code == 200
    assert _client(github, "Bearer").get(path).status_code == 200
    missing = httpx.get(github.url + path)
    wrong = httpx.get(github.url + path, headers={"Authorization": "Bearer nope"})
    assert (missing.status_code, missing.json()["message"]) == (401, "Requires authentication")
    assert (wrong.status_code, wrong.json()["message"]) == (401, "Bad credentials")
    assert set(wrong.json()) == {"message", "documentation_url", "status"}


def test_comment_crud_and_the_body_limit(github: GitHubServer) -> None:
    with _client(github) as client:
        made = client.post(f"/repos/{REPO}/issues/7/comments", json={"body": "hello"})
        cid = made.json()["id"]
        edited = client.patch(f"/repos/{REPO}/issues/comments/{cid}", json={"body": "edited"})
        too_long = client.post(f"/repos/{REPO}/issues/7/comments", json={"body": "x" * 65_537})
        assert [c["body"] for c in github.comments(REPO, 7)] == ["edited"]
        gone = client.delete(f"/repos/{REPO}/issues/comments/{cid}")
        again = client.delete(f"/repos/{REPO}/issues/comments/{cid}")
        no_pr = client.post(f"/repos/{REPO}/issues/99/comments", json={"body": "x"})
    assert (made.status_code, edited.status_code, gone.status_code) == (201, 200, 204)
    assert (again.status_code, no_pr.status_code) == (404, 404)
    assert too_long.status_code == 422
    assert too_long.json()["errors"][0]["message"] == (
        "body is too long (maximum is 65536 characters)"
    )
    assert github.comments(REPO, 7) == []


def test_issues_list_by_label_with_pull_requests_among_them(github: GitHubServer) -> None:
    with _client(github) as client:
        client.post(f"/repos/{REPO}/issues", json={"title": "Drift: dev", "labels": ["drift"]})
        client.post(f"/repos/{REPO}/issues", json={"title": "Other", "labels": ["bug"]})
        drift = client.get(f"/repos/{REPO}/issues", params={"labels": "drift"}).json()
        everything = client.get(f"/repos/{REPO}/issues").json()
    assert [i["title"] for i in drift] == ["Drift: dev"]
    assert any("pull_request" in i for i in everything)  # pull requests are issues too


def test_injected_faults_answer_the_next_matching_requests(github: GitHubServer) -> None:
    github.inject(kind="secondary", status=403, retry_after=7, method="GET", count=1)
    github.inject(status=502, path="/comments", method="POST")
    with _client(github) as client:
        limited = client.get(f"/repos/{REPO}/issues/7/labels")
        after = client.get(f"/repos/{REPO}/issues/7/labels")
        broken = client.post(f"/repos/{REPO}/issues/7/comments", json={"body": "x"})
    assert (limited.status_code, limited.headers["retry-after"]) == (403, "7")
    assert "secondary rate limit" in limited.json()["message"]
    assert (after.status_code, broken.status_code) == (200, 502)
    assert [r["status"] for r in github.requests()] == [403, 200, 502]


def test_it_runs_as_a_module_and_prints_its_url() -> None:
    command = [sys.executable, "-m", "testkit.github_server", "--port", "0", "--token", "t"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as proc:
        try:
            assert proc.stdout is not None
            ready, _, _ = select.select([proc.stdout], [], [], 30.0)  # no hang if it never prints
            assert ready, "the server printed no URL within 30 s"
            url = proc.stdout.readline().split(" listening on ")[1].strip()
            answer = httpx.get(f"{url}/repos/a/b/issues", headers={"Authorization": "token t"})
            assert answer.status_code == 404
        finally:
            proc.terminate()
