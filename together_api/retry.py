"""One retry and poll policy, reused by every API call and every waiter, on one injectable clock so
that tests check every bound without sleeping (why not ``stamina``: see `RetryPolicy`)."""

from __future__ import annotations

import email.utils
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Final, TypeVar

__all__ = [
    "RETRYABLE_STATUSES",
    "Clock",
    "RetryDecision",
    "RetryPolicy",
    "Sleep",
    "call_with_retry",
    "retry_after",
    "retryable_status",
]

T = TypeVar("T")
Sleep = Callable[[float], None]
Clock = Callable[[], float]

RETRYABLE_STATUSES: Final = frozenset({408, 429, 500, 502, 503, 504})
"""Statuses worth another try of an idempotent request (and of any request, for 429)."""


def retryable_status(status: int) -> bool:
    """A status another try may cure: :data:`RETRYABLE_STATUSES` or an unknown 5xx past 504."""
    return status in RETRYABLE_STATUSES or status > 504


def retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds from ``Retry-After`` (delta or HTTP date) or ``Retry-After-Ms``.

    A header that is neither (``soon``) counts as absent: the policy's own backoff applies, and
    a server's typo never escapes as a ``ValueError``. ``headers`` must look names up without
    regard to case (httpx's do).
    """
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return float(millis) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


@dataclass(frozen=True)
class RetryPolicy:
    """Bounds for retrying one request and for polling a cluster.

    Retrying: at most ``attempts`` tries; before retry ``n`` (1-based) wait a
    uniform random time in ``[0, min(max_backoff, initial_backoff * 2**(n-1))]``
    (full jitter), or exactly ``Retry-After`` seconds when the server sent it
    (capped at ``max_retry_after``). No retry is started that would end after
    ``deadline`` seconds from the first try.

    Polling: the ``n``-th wait (0-based) is
    ``min(poll_max, poll_initial * poll_growth**n)``: quick at first, when the
    interesting transitions happen, then settling at ``poll_max``. A poll whose
    request still failed after its retries (5xx, 429, no answer) is skipped, up
    to ``poll_failures`` in a row: one lost answer must not fail a wait of
    many minutes, but an API that stays down must.

    Why not ``stamina`` (or ``tenacity`` beneath it)? Both fit the retry loop, but
    both measure their overall deadline on the real monotonic clock and stamina
    adds jitter on top of the backoff instead of drawing it from ``[0, backoff]``.
    We need three things they don't give together: full jitter, an overall
    deadline that honours ``Retry-After`` and one injectable ``sleep``/``clock``
    pair shared with the cluster waiters. The arithmetic is a few lines, so it lives here.
    """

    attempts: int = 5
    initial_backoff: float = 0.5
    max_backoff: float = 8.0
    deadline: float = 60.0
    max_retry_after: float = 60.0
    poll_initial: float = 1.0
    poll_growth: float = 1.5
    poll_max: float = 30.0
    poll_failures: int = 3
    rng: random.Random = field(default_factory=random.Random, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValueError("attempts must be >= 1")
        if min(self.initial_backoff, self.max_backoff, self.deadline, self.poll_initial) < 0:
            raise ValueError("backoff, deadline and poll intervals must be >= 0")

    def backoff_cap(self, retry: int) -> float:
        """Upper bound of the jittered wait before retry number ``retry`` (1-based)."""
        return min(self.max_backoff, self.initial_backoff * 2.0 ** max(retry - 1, 0))

    def backoff(self, retry: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry ``retry``; ``Retry-After`` wins when present."""
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_retry_after)
        return self.rng.uniform(0.0, self.backoff_cap(retry))

    def poll_interval(self, poll: int) -> float:
        """Seconds to wait before poll ``poll`` (0-based) of a waiter."""
        interval: float = self.poll_initial * self.poll_growth**poll
        return min(self.poll_max, interval)


class RetryDecision:
    """What the caller's classifier says about a failure: retry, and after how long."""

    __slots__ = ("retry_after",)

    def __init__(self, retry_after: float | None = None) -> None:
        self.retry_after = retry_after


def call_with_retry(
    fn: Callable[[], T],
    *,
    policy: RetryPolicy,
    classify: Callable[[Exception], RetryDecision | None],
    sleep: Sleep = time.sleep,
    clock: Clock = time.monotonic,
    on_retry: Callable[[int, Exception, float], None] | None = None,
) -> T:
    """Run ``fn`` until it succeeds, ``classify`` says stop, or the policy is spent.

    ``classify`` gets each exception and returns ``None`` (give up, re-raise) or
    a :class:`RetryDecision`. When the policy is spent the last exception is
    re-raised unchanged, so the caller maps it to a :class:`TogetherError`.
    """
    start = clock()
    attempt = 1
    while True:
        try:
            return fn()
        except Exception as exc:
            decision = classify(exc)
            if decision is None or attempt >= policy.attempts:
                raise
            wait = policy.backoff(attempt, decision.retry_after)
            if clock() + wait - start > policy.deadline:
                raise
            if on_retry is not None:
                on_retry(attempt, exc, wait)
            sleep(wait)
            attempt += 1
