"""`poll_until`'s edges, each on a fake clock: the last fraction of a second before the deadline
still polls, a lost poll is forgiven only up to `skips` in a row (none by default), and the log
line of a lost poll names the wait and the error."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pytest

from tests.fake_time import FakeTime
from together_api.poll import Pace, poll_until
from together_facts.errors import ServerError


class TimedOut(Exception):
    pass


def _answers(*items: Any) -> Callable[[], Any]:
    queue = list(items)

    def refresh() -> Any:
        item = queue.pop(0)
        if isinstance(item, Exception):
            raise item
        return item

    return refresh


def _until_ready(refresh: Callable[[], Any], time: FakeTime, **how: Any) -> Any:
    return poll_until(
        refresh,
        lambda answer: answer == "ready",
        subject="cluster 'train'",
        timed_out=TimedOut,
        pace=Pace(lambda n: 2.0**n, time.clock, time.sleep),
        **{"timeout": 100, **how},
    )


def test_half_a_second_left_is_one_more_poll_not_a_timeout() -> None:
    time = FakeTime()
    assert _until_ready(_answers("queued", "queued", "ready"), time, timeout=1.5) == "ready"
    assert time.sleeps == [1.0, 0.5]


def test_a_lost_poll_is_no_skip_unless_skips_says_so() -> None:
    lost = ServerError("bad gateway", status=502)
    with pytest.raises(ServerError):
        _until_ready(_answers(lost, "ready"), FakeTime(), skip=(ServerError,))


def test_an_answer_between_lost_polls_starts_the_count_again() -> None:
    lost = ServerError("bad gateway", status=502)
    refresh = _answers(lost, "queued", lost, "queued", lost, "ready")
    assert _until_ready(refresh, FakeTime(), skip=(ServerError,), skips=1) == "ready"


def test_a_lost_poll_is_logged_with_the_wait_and_the_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class Plain(Exception):
        pass

    # the error's message alone, not its fix (which says what to do once the wait gave up)
    lost = ServerError("bad gateway", status=502, fix="try again later")
    refresh = _answers(lost, Plain("reset by peer"), "ready")
    with caplog.at_level(logging.WARNING, logger="together_api.client"):
        _until_ready(refresh, FakeTime(), skip=(ServerError, Plain), skips=2)
    assert [r.getMessage() for r in caplog.records if r.name == "together_api.client"] == [
        "cluster 'train': failed (bad gateway); trying again after a pause",
        "cluster 'train': failed (reset by peer); trying again after a pause",
    ]
