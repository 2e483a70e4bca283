"""The one wait loop, like Terraform's `StateChangeConf`: poll until an answer reaches its target,
with backoff, a deadline and progress; every wait in the product is one `poll_until` call, and
`set_testing` (stamina's switch) removes the waiting in tests while deadlines still count."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from together_api.retry import Clock, Sleep

__all__ = ["Known", "Pace", "is_testing", "poll_until", "set_testing"]

T = TypeVar("T")

log = logging.getLogger("together_api.client")

_testing = False


def set_testing(on: bool) -> None:
    """The test switch: while on, no wait sleeps; each pause counts as time spent toward its
    wait's deadline, so a wait that never reaches its target still times out, at once."""
    global _testing
    _testing = on


def is_testing() -> bool:
    """Whether `set_testing` removed the waiting."""
    return _testing


@dataclass(frozen=True)
class Pace:
    """How a wait spends its time: `backoff(n)` is the pause before poll `n` (0-based), read and
    slept on `clock` and `sleep` (a client's own pair: fake in tests)."""

    backoff: Callable[[int], float]
    clock: Clock
    sleep: Sleep


class Known(Generic[T]):
    """An answer already in hand (a POST's or a DELETE's) that stands for the first poll: one
    request fewer, and the first pause comes before the first refresh."""

    __slots__ = ("answer",)

    def __init__(self, answer: T) -> None:
        self.answer = answer


def _reaches_nothing(_answer: object) -> None:
    return None


def poll_until(
    refresh: Callable[[], T],
    target: Callable[[T], bool],
    *,
    subject: str,
    timeout: float,
    timed_out: Callable[[str | None], Exception],
    pace: Pace,
    state: Callable[[T], str | None] = lambda _answer: None,
    failed: Callable[[T], Exception | None] = _reaches_nothing,
    progress: Callable[[T], None] | None = None,
    first: Known[T] | None = None,
    last_state: str | None = None,
    skip: tuple[type[Exception], ...] = (),
    skips: int = 0,
) -> T:
    """Refresh until `target(answer)`, and return that answer.

    - `refresh` is one poll (Terraform's Refresh): it returns the object now, or raises to end
      the wait; `first` stands for its first call.
    - `state(answer)` names where the object is; `progress` hears every answer whose state
      differs from the last one (`last_state` is the state before the first answer).
    - `failed(answer)` is the error to raise when the target is out of reach (None: poll on).
    - Before poll `n` (0-based, counting lost polls) the wait pauses `pace.backoff(n)` seconds,
      never past the deadline, `timeout` seconds after the call on `pace.clock`; once it has
      passed, `timed_out(last state)` is raised.
    - A poll that raised one of `skip` (each already survived its request's own retries) is
      passed over, up to `skips` in a row: one lost answer must not fail a wait of minutes.
    """
    spent_in_tests = 0.0
    deadline = pace.clock() + timeout
    poll = lost = 0
    pending = first
    while True:
        try:
            answer = pending.answer if pending is not None else refresh()
            pending = None
            lost = 0
        except skip as exc:
            lost += 1
            if lost > skips:
                raise
            log.warning(
                "%s: failed (%s); trying again after a pause", subject, getattr(exc, "message", exc)
            )
        else:
            now_state = state(answer)
            if now_state != last_state:
                last_state = now_state
                if progress is not None:
                    progress(answer)
            error = failed(answer)
            if error is not None:
                raise error
            if target(answer):
                return answer
        remaining = deadline - (pace.clock() + spent_in_tests)
        if remaining <= 0:
            raise timed_out(last_state)
        pause = min(pace.backoff(poll), remaining)
        if _testing:
            spent_in_tests += pause
        else:
            pace.sleep(pause)
        poll += 1
