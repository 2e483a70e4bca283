"""One HTTP request under the retry policy, for Together's API and GitHub's alike: httpx's
failures read as `together_facts.resend`'s, whose rule says what may be sent again."""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

import httpx

from together_api.retry import (
    Clock,
    RetryDecision,
    RetryPolicy,
    Sleep,
    call_with_retry,
    retry_after,
)
from together_facts.resend import Failure, may_resend

__all__ = ["NEVER_SENT", "send_with_retry"]

NEVER_SENT: Final = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)
"""Failures before the request left: safe to send again, even a POST. Here, not in `retry`, so
the retry policy (and what imports it, such as the autoscaler's `decide`) loads no httpx."""


class _Answer(Exception):
    """Internal: an answer the policy may retry, and whether it is a rate limit."""

    def __init__(self, response: httpx.Response, decision: RetryDecision, *, limited: bool):
        super().__init__(response.status_code)
        self.response = response
        self.decision = decision
        self.limited = limited


def send_with_retry(
    send: Callable[[], httpx.Response],
    *,
    policy: RetryPolicy,
    idempotent: bool,
    rate_limit: Callable[[httpx.Response], RetryDecision | None],
    retryable: Callable[[httpx.Response], bool],
    sleep: Sleep,
    clock: Clock,
    on_retry: Callable[[int, str, float], None],
) -> httpx.Response:
    """The last answer (retried while the policy allows), or the `httpx.TransportError` that
    ended it.

    A rate limit (`rate_limit` gives its wait) was refused before any work, so any method is
    sent again; so is a request that never left (`NEVER_SENT`). Another `retryable` answer or a
    lost connection may mean the server acted: only an `idempotent` request is sent again.
    `on_retry(attempt, what, wait)` hears each retry, `what` being `HTTP 503` or the error.
    """

    def attempt() -> httpx.Response:
        response = send()
        limit = rate_limit(response)
        if limit is not None:
            raise _Answer(response, limit, limited=True)
        if retryable(response):
            raise _Answer(response, RetryDecision(retry_after(response.headers)), limited=False)
        return response

    def failure(exc: Exception) -> Failure | None:
        if isinstance(exc, _Answer):
            return Failure.RATE_LIMITED if exc.limited else Failure.ANSWERED
        if isinstance(exc, NEVER_SENT):
            return Failure.NEVER_SENT
        if isinstance(exc, httpx.TransportError):
            return Failure.CONNECTION_LOST
        return None

    def classify(exc: Exception) -> RetryDecision | None:
        failed = failure(exc)
        if failed is None or not may_resend(failed, idempotent=idempotent):
            return None
        return exc.decision if isinstance(exc, _Answer) else RetryDecision()

    def heard(number: int, exc: Exception, wait: float) -> None:
        what = (
            f"HTTP {exc.response.status_code}"
            if isinstance(exc, _Answer)
            else f"{type(exc).__name__}: {exc}"
        )
        on_retry(number, what, wait)

    try:
        return call_with_retry(
            attempt, policy=policy, classify=classify, sleep=sleep, clock=clock, on_retry=heard
        )
    except _Answer as exc:
        return exc.response
