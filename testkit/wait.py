"""The one poll of the tests and benchmarks: wait in real time for another process (the engine, a
simulator, an API server, a controller) to get somewhere, never for simulated time."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

__all__ = ["wait_for"]

T = TypeVar("T")


def wait_for(
    check: Callable[[], T | None],
    what: str,
    *,
    timeout: float = 120.0,
    interval: float = 0.1,
    each: Callable[[], object] | None = None,
    ignore: tuple[type[BaseException], ...] = (),
) -> T:
    """Poll `check` until it returns something truthy, and return that.

    `each` runs before every poll (e.g. a simulator's clock advanced one step, so simulated
    time passes while real processes catch up); an error in `ignore` counts as "not yet". After
    `timeout` real seconds it fails naming `what` and the last answer."""
    deadline = time.monotonic() + timeout
    last: object = None
    while True:
        if each is not None:
            each()
        try:
            result = check()
        except ignore as error:
            last = error
        else:
            if result:
                return result
            last = result
        if time.monotonic() > deadline:
            raise AssertionError(
                f"timed out after {timeout:.0f} s waiting for {what}; last: {last!r}"
            )
        time.sleep(interval)
