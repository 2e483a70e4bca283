"""The retry/poll policy: bounds, jitter, Retry-After and deadline, without sleeping."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from tests.fake_time import FakeTime
from together_api.retry import RetryDecision, RetryPolicy, call_with_retry
from together_facts.resend import Failure, may_resend


class Boom(Exception):
    pass


def always_retry(exc: Exception) -> RetryDecision | None:
    return RetryDecision() if isinstance(exc, Boom) else None


def flaky(failures: int) -> tuple[list[int], Callable[[], str]]:
    calls: list[int] = []

    def fn() -> str:
        calls.append(1)
        if len(calls) <= failures:
            raise Boom(len(calls))
        return "ok"

    return calls, fn


def test_backoff_is_full_jitter_under_an_exponential_cap() -> None:
    policy = RetryPolicy(initial_backoff=0.5, max_backoff=4.0, rng=random.Random(1))
    assert [policy.backoff_cap(n) for n in range(1, 6)] == [0.5, 1.0, 2.0, 4.0, 4.0]
    samples = [policy.backoff(3) for _ in range(500)]
    assert all(0.0 <= s <= 2.0 for s in samples)
    assert min(samples) < 0.2 and max(samples) > 1.8  # spread over the whole range


def test_retry_after_wins_and_is_capped() -> None:
    policy = RetryPolicy(max_retry_after=10.0)
    assert policy.backoff(1, retry_after=3.0) == 3.0
    assert policy.backoff(1, retry_after=120.0) == 10.0
    assert policy.backoff(1, retry_after=-1.0) == 0.0


def test_poll_interval_grows_from_one_second_to_thirty() -> None:
    policy = RetryPolicy()
    intervals = [policy.poll_interval(n) for n in range(12)]
    assert intervals[0] == 1.0
    assert intervals == sorted(intervals)
    assert intervals[-1] == 30.0


def test_retries_until_success_and_sleeps_between() -> None:
    time = FakeTime()
    calls, fn = flaky(2)
    result = call_with_retry(
        fn,
        policy=RetryPolicy(rng=random.Random(0)),
        classify=always_retry,
        sleep=time.sleep,
        clock=time.clock,
    )
    assert result == "ok" and len(calls) == 3 and len(time.sleeps) == 2


def test_gives_up_after_the_attempt_limit_with_the_last_error() -> None:
    time = FakeTime()
    calls, fn = flaky(100)
    with pytest.raises(Boom) as info:
        call_with_retry(
            fn,
            policy=RetryPolicy(attempts=4),
            classify=always_retry,
            sleep=time.sleep,
            clock=time.clock,
        )
    assert len(calls) == 4 and info.value.args == (4,)
    assert len(time.sleeps) == 3


def test_non_retryable_errors_raise_at_once() -> None:
    time = FakeTime()

    def fn() -> None:
        raise KeyError("nope")

    with pytest.raises(KeyError):
        call_with_retry(fn, policy=RetryPolicy(), classify=always_retry, sleep=time.sleep)
    assert time.sleeps == []


def test_no_retry_starts_that_would_end_past_the_deadline() -> None:
    time = FakeTime()
    calls, fn = flaky(100)
    with pytest.raises(Boom):
        call_with_retry(
            fn,
            policy=RetryPolicy(attempts=100, deadline=10.0),
            classify=lambda exc: RetryDecision(retry_after=4.0),
            sleep=time.sleep,
            clock=time.clock,
        )
    assert time.sleeps == [4.0, 4.0]
    assert time.now <= 10.0 and len(calls) == 3


def test_on_retry_hears_each_retry() -> None:
    time = FakeTime()
    heard: list[tuple[int, float]] = []
    _, fn = flaky(2)
    call_with_retry(
        fn,
        policy=RetryPolicy(),
        classify=lambda exc: RetryDecision(retry_after=1.5),
        sleep=time.sleep,
        clock=time.clock,
        on_retry=lambda n, exc, wait: heard.append((n, wait)),
    )
    assert heard == [(1, 1.5), (2, 1.5)]


def test_policy_rejects_nonsense() -> None:
    with pytest.raises(ValueError):
        RetryPolicy(attempts=0)
    with pytest.raises(ValueError):
        RetryPolicy(deadline=-1)


@pytest.mark.parametrize(
    ("failure", "any_method"),
    [
        (Failure.RATE_LIMITED, True),
        (Failure.NEVER_SENT, True),
        (Failure.ANSWERED, False),
        (Failure.CONNECTION_LOST, False),
    ],
)
def test_the_resend_rule_sends_a_post_again_only_when_the_server_did_nothing(
    failure: Failure, any_method: bool
) -> None:
    assert may_resend(failure, idempotent=True)
    assert may_resend(failure, idempotent=False) is any_method
