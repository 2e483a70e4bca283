"""The retry policy's edges (`together_api/retry.py`): which statuses are tried again, every form
of Retry-After, a retry that ends exactly at the deadline, what `on_retry` hears, and the words of
a policy's rejection. A fake clock, and a fixed wall clock for HTTP dates."""

from __future__ import annotations

import email.utils
import time
from typing import Any

import httpx
import pytest

from tests.fake_time import FakeTime
from together_api.retry import (
    RetryDecision,
    RetryPolicy,
    call_with_retry,
    retry_after,
    retryable_status,
)

NOW = 1_800_000_000.0  # the wall clock while an HTTP date is read


@pytest.mark.parametrize(
    ("status", "again"),
    [
        *[(408, True), (429, True), (500, True), (504, True), (505, True), (599, True)],
        *[(400, False), (404, False), (409, False), (501, False)],
    ],
)
def test_which_statuses_are_tried_again(status: int, again: bool) -> None:
    assert retryable_status(status) is again


@pytest.fixture
def wall_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(time, "time", lambda: NOW)  # the module retry.py reads it from


def _date(at: float) -> str:
    return email.utils.formatdate(at, usegmt=True)


@pytest.mark.usefixtures("wall_clock")
@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"Retry-After-Ms": "1500"}, 1.5),
        ({"Retry-After-Ms": "250", "Retry-After": "9"}, 0.25),  # the finer one wins
        ({"Retry-After-Ms": "soon", "Retry-After": "9"}, 9.0),  # a bad one is no header
        ({"Retry-After": "3"}, 3.0),
        ({"Retry-After": _date(NOW + 120)}, 120.0),
        ({"Retry-After": _date(NOW - 120)}, 0.0),  # a date gone by: at once
        ({"Retry-After": "soon"}, None),
        ({}, None),
    ],
    ids=["ms", "ms-wins", "bad-ms", "seconds", "date", "past-date", "bad", "none"],
)
def test_every_form_of_retry_after(headers: dict[str, str], seconds: float | None) -> None:
    assert retry_after(httpx.Headers(headers)) == seconds


class Boom(Exception):
    pass


def _failing_then(ok: int) -> Any:
    calls: list[int] = []

    def fn() -> str:
        calls.append(1)
        if len(calls) <= ok:
            raise Boom(f"try {len(calls)}")
        return "done"

    return fn


def test_a_retry_that_ends_exactly_at_the_deadline_is_made() -> None:
    fake = FakeTime()
    done = call_with_retry(
        _failing_then(2),
        policy=RetryPolicy(attempts=10, deadline=8.0),
        classify=lambda exc: RetryDecision(retry_after=4.0),
        sleep=fake.sleep,
        clock=fake.clock,
    )
    assert done == "done" and fake.sleeps == [4.0, 4.0]


def test_on_retry_hears_the_error_it_retries() -> None:
    heard: list[str] = []
    fake = FakeTime()
    call_with_retry(
        _failing_then(2),
        policy=RetryPolicy(),
        classify=lambda exc: RetryDecision(retry_after=1.0),
        sleep=fake.sleep,
        clock=fake.clock,
        on_retry=lambda n, exc, wait: heard.append(f"{n}: {exc}"),
    )
    assert heard == ["1: try 1", "2: try 2"]


@pytest.mark.parametrize(
    ("field", "message"),
    [
        ("attempts", "attempts must be >= 1"),
        ("initial_backoff", "backoff, deadline and poll intervals must be >= 0"),
        ("max_backoff", "backoff, deadline and poll intervals must be >= 0"),
        ("deadline", "backoff, deadline and poll intervals must be >= 0"),
        ("poll_initial", "backoff, deadline and poll intervals must be >= 0"),
    ],
)
def test_a_policy_below_its_floor_is_rejected_with_the_rule(field: str, message: str) -> None:
    below: Any = 0 if field == "attempts" else -0.5
    with pytest.raises(ValueError) as raised:
        RetryPolicy(**{field: below})
    assert str(raised.value) == message


def test_a_policy_of_zero_waits_is_allowed() -> None:
    policy = RetryPolicy(initial_backoff=0, max_backoff=0, deadline=0, poll_initial=0)
    assert policy.backoff_cap(3) == 0
