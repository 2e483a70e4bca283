"""The drill's one way to wait: ``poll_until`` at five looks a second, errors of the API counted
as not yet, and a timeout that says what it waited for."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Final, TypeVar

import httpx

from together_api.poll import Pace, poll_until

T = TypeVar("T")


class CouldNotDrill(RuntimeError):
    """No verdict on the workload: the drill could not run it (a world that did not come up, a
    cluster it may not drill, a Job that ended before a reclaim was due); exit 2."""


START_TIMEOUT_SECONDS: Final = 300.0
"""``--start-timeout``'s default: how long each thing the drill starts may take to come up (the
local world's simulator, control plane and real nodes; a pod of the Job). A loaded laptop needs
a fraction of it; a VM without KVM starts one control plane in about 156 s."""

POLL: Final = Pace(lambda _poll: 0.2, time.monotonic, time.sleep)
"""The drill's pace: real processes starting and pods changing, looked at five times a second."""


def wait_for(check: Callable[[], T | None], what: str, timeout: float) -> T:
    """``poll_until`` ``check`` is truthy and return its answer; errors of the API count as
    not yet (a control plane starting refuses connections for a while)."""
    last: list[object] = [None]

    def refresh() -> T | None:
        try:
            value = check()
        except (httpx.HTTPError, KeyError) as error:
            last[0] = error
            return None
        last[0] = value
        return value

    answer = poll_until(
        refresh,
        bool,
        subject=what,
        timeout=timeout,
        timed_out=lambda _state: CouldNotDrill(
            f"timed out after {timeout:.0f} s waiting for {what}"
            + (f" (last: {last[0]!r})" if last[0] is not None else "")
        ),
        pace=POLL,
    )
    assert answer is not None
    return answer
