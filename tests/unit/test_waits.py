"""The one wait loop (`poll_until`) and what every kind's delete waits by: a fake clock, never a
real sleep."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from tests.fake_api import CLUSTERS, ONE, SPEC, FakeApi, cluster, reply
from tests.fake_time import FakeTime
from together_api.client import TogetherClient
from together_api.poll import Known, Pace, poll_until, set_testing
from together_facts.errors import ClusterStateError, ServerError
from together_provider.cluster.lifecycle import ClusterLifecycle
from together_provider.cluster.table import CLUSTER
from together_provider.framework.lifecycle import DELETE_TIMEOUT_SECONDS, ResourceLifecycle
from together_provider.framework.schema import Schema
from together_provider.volume.lifecycle import VolumeLifecycle
from together_provider.volume.table import VOLUME


def pace(time: FakeTime) -> Pace:
    return Pace(lambda n: 2.0**n, time.clock, time.sleep)


class TimedOut(Exception):
    pass


def until_ready(refresh: Callable[[], Any], time: FakeTime | None = None, **how: Any) -> Any:
    """`poll_until` of `refresh` until it answers "ready", within 100 s on `time` (or its own)."""
    how = {"timeout": 100, "pace": pace(time or FakeTime()), **how}
    return poll_until(
        refresh, lambda state: state == "ready", subject="thing", timed_out=TimedOut, **how
    )


def answers(*items: Any) -> Callable[[], Any]:
    """A refresh answering `items` in order (an exception is raised), the last repeating."""
    queue = list(items)

    def refresh() -> Any:
        item = queue.pop(0) if len(queue) > 1 else queue[0]
        if isinstance(item, Exception):
            raise item
        return item

    return refresh


def test_poll_until_returns_the_answer_at_target_and_reports_each_change() -> None:
    time, heard = FakeTime(), list[str]()
    done = until_ready(
        answers("queued", "queued", "building", "ready"), time, state=str, progress=heard.append
    )
    assert done == "ready" and heard == ["queued", "building", "ready"]
    assert time.sleeps == [1.0, 2.0, 4.0]


def test_poll_until_stops_at_once_when_the_target_is_out_of_reach() -> None:
    with pytest.raises(ValueError, match="failed"):
        until_ready(
            answers("queued", "failed"),
            failed=lambda state: ValueError(state) if state == "failed" else None,
        )


def test_poll_until_times_out_at_the_deadline_with_the_last_state() -> None:
    time = FakeTime()
    with pytest.raises(TimedOut, match="building"):
        until_ready(answers("queued", "building"), time, timeout=10, state=str)
    assert time.now == 10.0 and time.sleeps == [1.0, 2.0, 4.0, 3.0]


def test_poll_until_skips_lost_polls_up_to_its_limit() -> None:
    lost = ServerError("bad gateway", status=502)
    assert until_ready(answers(lost, lost, "ready"), skip=(ServerError,), skips=2) == "ready"
    with pytest.raises(ServerError):
        until_ready(answers(lost, lost, lost, "ready"), skip=(ServerError,), skips=2)


def test_a_known_answer_stands_for_the_first_poll() -> None:
    refreshes: list[int] = []

    def refresh() -> str:
        refreshes.append(1)
        return "ready"

    time = FakeTime()
    until_ready(refresh, time, first=Known("queued"))
    assert refreshes == [1] and time.sleeps == [1.0]


@pytest.fixture
def no_waiting() -> Iterator[None]:
    set_testing(True)
    yield
    set_testing(False)


@pytest.mark.usefixtures("no_waiting")
def test_the_test_switch_removes_the_waiting_but_not_the_deadline() -> None:
    def never(_seconds: float) -> None:
        raise AssertionError("slept with the test switch on")

    polls: list[int] = []

    def refresh() -> str:
        polls.append(1)
        return "queued"

    with pytest.raises(TimedOut):
        until_ready(refresh, timeout=10, pace=Pace(lambda n: 2.0**n, lambda: 0.0, never))
    assert len(polls) == 5  # with pauses of 1, 2, 4 and the last 3 seconds between: 10 in all


# ---------------------------------------------------------------- every kind's delete

VOLUMES = "/v1/compute/clusters/storage/volumes"
DELETING: dict[Schema[Any], tuple[str, str, dict[str, Any]]] = {
    CLUSTER: ("c-1", ONE, cluster("Deleting")),
    VOLUME: ("vol-1", f"{VOLUMES}/vol-1", {"volume_id": "vol-1", "status": "deleting"}),
}
STATE: dict[Schema[Any], dict[str, Any]] = {
    CLUSTER: SPEC,
    VOLUME: {"volume_name": "ckpt", "region": "us-central-8", "size_tib": 2.0},
}
KINDS: dict[Schema[Any], type[ResourceLifecycle]] = {
    CLUSTER: ClusterLifecycle,
    VOLUME: VolumeLifecycle,
}


def stuck_deleting(schema: Schema[Any], time: FakeTime) -> tuple[Any, str]:
    """A lifecycle of `schema`'s kind, and an object of it that answers its DELETE but never
    goes away."""
    id_, path, body = DELETING[schema]
    api = FakeApi()
    api.on("GET", CLUSTERS, reply(200, {"clusters": []}))
    api.on("DELETE", path, reply(200, {"success": True}))
    api.on("GET", path, reply(200, body))
    client = TogetherClient(
        api_key="k", transport=httpx.MockTransport(api), sleep=time.sleep, clock=time.clock
    )
    return KINDS[schema](client), id_


@pytest.mark.parametrize("schema", [CLUSTER, VOLUME], ids=["cluster", "volume"])
@pytest.mark.parametrize(
    ("recorded", "host", "waited"),
    [(90.0, None, 90.0), (90.0, 45.0, 45.0), (None, None, DELETE_TIMEOUT_SECONDS)],
)
def test_every_kind_waits_for_a_delete_as_long_as_its_recorded_timeout_or_the_hosts(
    schema: Schema[Any], recorded: float | None, host: float | None, waited: float
) -> None:
    time = FakeTime()
    state = {**STATE[schema]}
    if recorded is not None:
        state["ready_timeout_seconds"] = recorded
    lifecycle, id_ = stuck_deleting(schema, time)
    with pytest.raises(ClusterStateError, match="in time"):
        lifecycle.delete(id_, schema.stored(state), timeout_seconds=host)
    assert time.now == pytest.approx(waited)
