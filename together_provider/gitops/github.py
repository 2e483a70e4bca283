"""GitHub's REST API on httpx: the few calls the PR comment and the drift issue need, retried
under the project's one policy (`together_api.retry`), the token redacted from every message."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import httpx

from together_api.resend import send_with_retry
from together_api.retry import RetryDecision, RetryPolicy, retry_after, retryable_status

if TYPE_CHECKING:
    from together_api.retry import Clock, Sleep

__all__ = ["DEFAULT_API_URL", "GITHUB_RETRY", "GitHubClient", "GitHubError", "GitHubSettings"]

DEFAULT_API_URL: Final = "https://api.github.com"
GITHUB_RETRY: Final = RetryPolicy(deadline=180.0, max_retry_after=90.0)
"""The project's policy with room for one secondary-limit wait of GitHub's "one minute"."""
_SECONDARY_WAIT: Final = 60.0
_PERMISSIONS: Final = (
    "the workflow needs `permissions: pull-requests: write` (PR comments) or `issues: write` "
    "(the drift issue); a pull request from a fork gets a read-only token"
)


class GitHubError(Exception):
    """GitHub refused or could not answer: what was asked, what it said, and the fix."""

    def __init__(self, message: str, *, status: int | None = None, fix: str | None = None):
        super().__init__(message + (f"; {fix}" if fix else ""))
        self.status = status
        self.fix = fix


@dataclass(frozen=True, repr=False)
class GitHubSettings:
    """Where to post, from the variables GitHub Actions sets (GITHUB_TOKEN only when passed)."""

    api_url: str
    repository: str
    token: str

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> GitHubSettings:
        token = environ.get("GITHUB_TOKEN", "").strip()
        repository = environ.get("GITHUB_REPOSITORY", "").strip()
        if not token:
            raise GitHubError(
                "GITHUB_TOKEN is not set",
                fix="pass it to the step: `env: GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}`",
            )
        owner, _, name = repository.partition("/")
        if not owner or not name or "/" in name:
            raise GitHubError(
                f"GITHUB_REPOSITORY must be OWNER/NAME, got {repository!r}",
                fix="GitHub Actions sets it; elsewhere export it",
            )
        api_url = environ.get("GITHUB_API_URL", "").strip() or DEFAULT_API_URL
        return cls(api_url.rstrip("/"), repository, token)


def _message(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text[:300] or response.reason_phrase
    if not isinstance(body, dict):
        return response.reason_phrase
    details = [
        str(e.get("message") or f"{e.get('field')} {e.get('code')}")
        for e in body.get("errors") or []
        if isinstance(e, dict)
    ]
    return ": ".join([str(body.get("message") or response.reason_phrase), *details])


def _rate_limit(response: httpx.Response) -> RetryDecision | None:
    """The wait on a secondary rate limit; None when this is no secondary limit.

    Per GitHub's REST docs, a secondary limit is a 403 or 429 whose message names it, with
    `retry-after` when GitHub says how long to wait (one minute otherwise); a primary one has
    `x-ratelimit-remaining: 0`.
    """
    if response.status_code not in (403, 429):
        return None
    after = retry_after(response.headers)
    if after is not None:
        return RetryDecision(after)
    if response.headers.get("x-ratelimit-remaining") == "0":
        return None  # the primary limit: resets within the hour, not worth waiting for
    if "secondary rate limit" in _message(response).lower() or response.status_code == 429:
        return RetryDecision(_SECONDARY_WAIT)
    return None


def _retryable_error(response: httpx.Response) -> bool:
    """A status the project's policy retries, but a 429 only as the secondary limit it is."""
    return response.status_code != 429 and retryable_status(response.status_code)


class GitHubClient:
    """An authenticated httpx client for one repository, retrying under :data:`GITHUB_RETRY`.

    Why not PyGithub or ghapi: five endpoints (issue comments, labels, issues) do not justify a
    dependency, and those would not retry through the project's policy. The token only ever
    travels in the `Authorization` header; every message made here is redacted.

    ``sleep`` and ``clock`` are the retry policy's, so tests drive every wait without sleeping;
    ``warn`` gets one line per retry.
    """

    def __init__(
        self,
        settings: GitHubSettings,
        *,
        policy: RetryPolicy = GITHUB_RETRY,
        sleep: Sleep = time.sleep,
        clock: Clock = time.monotonic,
        warn: Callable[[str], None] | None = None,
        timeout: float = 30.0,
    ) -> None:
        self.settings = settings
        self._policy, self._sleep, self._clock = policy, sleep, clock
        self._warn = warn or (lambda line: print(line, file=sys.stderr))
        self._http = httpx.Client(
            base_url=settings.api_url,
            timeout=timeout,
            headers={
                "Authorization": f"Bearer {settings.token}",
                "Accept": "application/vnd.github+json",
                "X-GitHub-Api-Version": "2022-11-28",
                "User-Agent": "together-gpu-clusters-preview",
            },
        )

    def __enter__(self) -> GitHubClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.close()

    def _redact(self, text: str) -> str:
        return text.replace(self.settings.token, "***")

    def request(self, method: str, url: str, json: Any = None) -> httpx.Response:
        """One call under the retry policy; a GitHubError for anything but a 2xx."""
        where = self._redact(f"{method} {httpx.URL(url).path or url}")

        def on_retry(attempt: int, what: str, wait: float) -> None:
            self._warn(self._redact(f"GitHub: {where}: {what}; retry {attempt} in {wait:.1f}s"))

        try:
            # A POST answered 5xx may have been done (a comment, an issue): only a rate limit,
            # refused before any work, is safe to send again.
            response = send_with_retry(
                lambda: self._http.request(method, url, json=json),
                policy=self._policy,
                idempotent=method != "POST",
                rate_limit=_rate_limit,
                retryable=_retryable_error,
                sleep=self._sleep,
                clock=self._clock,
                on_retry=on_retry,
            )
        except httpx.TransportError as exc:
            raise GitHubError(
                self._redact(f"{where}: no answer from {self.settings.api_url}: {exc}"),
                fix="check GITHUB_API_URL and the network; rerun the job",
            ) from None
        if response.is_success:
            return response
        raise self._error(where, response, resent=method != "POST")

    def _error(self, where: str, response: httpx.Response, *, resent: bool) -> GitHubError:
        status = response.status_code
        said = self._redact(_message(response))
        message = f"GitHub refused {where}: HTTP {status} {said}"
        fixes = {
            401: "check GITHUB_TOKEN: pass `${{ secrets.GITHUB_TOKEN }}` (it expires with the job)",
            403: _PERMISSIONS,
            404: f"check GITHUB_REPOSITORY ({self.settings.repository}) and the PR or issue "
            "number; a token without access to a private repository also gets 404",
            422: "GitHub found the request invalid (see its message)",
        }
        fix = fixes.get(status, "GitHub may be having an outage: rerun the job later")
        if response.headers.get("x-ratelimit-remaining") == "0":
            reset = response.headers.get("x-ratelimit-reset", "")
            when = time.strftime("%H:%M UTC", time.gmtime(int(reset))) if reset.isdigit() else ""
            fix = f"the token's API rate limit is used up; it resets at {when or 'the hour'}"
        elif _rate_limit(response) is not None or (resent and _retryable_error(response)):
            message += f" (still failing after retries for {self._policy.deadline:.0f}s at most)"
        elif _retryable_error(response):
            message += " (not sent again: GitHub may have made it)"
        return GitHubError(message, status=status, fix=fix)

    def paginate(self, path: str, params: Mapping[str, str] | None = None) -> Iterator[Any]:
        """Every item of a list endpoint, following the `Link` header's `next` page (GitHub
        pages lists so, with `per_page` at most 100)."""
        url: str | None = str(httpx.URL(path, params={"per_page": "100", **(params or {})}))
        while url is not None:
            response = self.request("GET", url)
            yield from response.json()
            url = response.links.get("next", {}).get("url")

    def _repo(self, rest: str) -> str:
        return f"/repos/{self.settings.repository}/{rest}"

    def issue_comments(self, number: int) -> list[dict[str, Any]]:
        return list(self.paginate(self._repo(f"issues/{number}/comments")))

    def create_comment(self, number: int, body: str) -> dict[str, Any]:
        made: dict[str, Any] = self.request(
            "POST", self._repo(f"issues/{number}/comments"), {"body": body}
        ).json()
        return made

    def update_comment(self, comment_id: int, body: str) -> dict[str, Any]:
        edited: dict[str, Any] = self.request(
            "PATCH", self._repo(f"issues/comments/{comment_id}"), {"body": body}
        ).json()
        return edited

    def delete_comment(self, comment_id: int) -> None:
        self.request("DELETE", self._repo(f"issues/comments/{comment_id}"))

    def labels(self, number: int) -> list[str]:
        return [label["name"] for label in self.paginate(self._repo(f"issues/{number}/labels"))]

    def open_issues(self, label: str) -> list[dict[str, Any]]:
        """Open issues with ``label``; pull requests (which the endpoint also lists) left out."""
        found = self.paginate(self._repo("issues"), {"state": "open", "labels": label})
        return [issue for issue in found if "pull_request" not in issue]

    def create_issue(self, title: str, body: str, labels: list[str]) -> dict[str, Any]:
        made: dict[str, Any] = self.request(
            "POST", self._repo("issues"), {"title": title, "body": body, "labels": labels}
        ).json()
        return made
