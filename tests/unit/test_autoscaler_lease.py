"""Every field `together_autoscaler.leader` writes to its Lease and every branch of taking,
renewing and releasing it, over a Lease store that checks what it is asked for, with the wall
clock (the Lease's timestamps) and the replica's clock both fake. Two replicas acting at once is
what a wrong expiry here causes."""

from __future__ import annotations

import copy
import logging
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Any

import httpx2
import pytest
from lightkube import ApiError
from lightkube.models.coordination_v1 import LeaseSpec
from lightkube.models.meta_v1 import ObjectMeta, Status
from lightkube.resources.coordination_v1 import Lease

from together_autoscaler import leader
from together_autoscaler.leader import LeaseElector

START = datetime(2026, 1, 1, tzinfo=UTC)


def _error(code: int) -> ApiError:
    return ApiError(httpx2.Request("GET", "https://k"), status=Status(code=code, message="nope"))


class Store:
    """One Lease, ``ns/lease-x``; any other name, namespace or type asked for is a test failure.
    ``fail`` maps an operation to the status it answers with once."""

    def __init__(self, lease: Lease | None = None) -> None:
        self.lease = lease
        self.fail: dict[str, int] = {}
        self.writes = 0

    def _check(self, op: str) -> None:
        if op in self.fail:
            raise _error(self.fail.pop(op))

    def get(self, res: type, name: str, *, namespace: str) -> Lease:
        assert (res, name, namespace) == (Lease, "lease-x", "ns")
        self._check("get")
        if self.lease is None:
            raise _error(404)
        return copy.deepcopy(self.lease)

    def create(self, lease: Lease) -> Lease:
        self._check("create")
        self.writes += 1
        self.lease = copy.deepcopy(lease)
        return lease

    def replace(self, lease: Lease) -> Lease:
        self._check("replace")
        self.writes += 1
        self.lease = copy.deepcopy(lease)
        return lease

    @property
    def spec(self) -> LeaseSpec:
        assert self.lease is not None and self.lease.spec is not None
        return self.lease.spec


class Clock:
    now = 100.0

    def __call__(self) -> float:
        return self.now


class Wall:
    """`datetime` as leader.py reads it: now() only in UTC, one second later at each call."""

    calls = 0

    @classmethod
    def now(cls, tz: tzinfo | None = None) -> datetime:
        assert tz is UTC, "a Lease's times are UTC"
        cls.calls += 1
        return START + timedelta(seconds=cls.calls)


@pytest.fixture(autouse=True)
def wall(monkeypatch: pytest.MonkeyPatch) -> None:
    Wall.calls = 0
    monkeypatch.setattr(leader, "datetime", Wall)


def _elector(
    store: Store, identity: str = "a", clock: Clock | None = None, **how: Any
) -> LeaseElector:
    client: Any = store
    return LeaseElector(client, "ns", identity, name="lease-x", clock=clock or Clock(), **how)


def _held(holder: str | None, *, duration: int | None = 15, transitions: int | None = 2) -> Lease:
    spec = LeaseSpec(
        holderIdentity=holder,
        acquireTime=START,
        renewTime=START,
        leaseDurationSeconds=duration,
        leaseTransitions=transitions,
    )
    return Lease(metadata=ObjectMeta(name="lease-x", namespace="ns"), spec=spec)


def test_a_new_lease_is_every_field_of_ours() -> None:
    store = Store()
    assert _elector(store, lease_seconds=20).try_acquire_or_renew() is True
    assert store.lease is not None and store.lease.metadata is not None
    assert (store.lease.metadata.name, store.lease.metadata.namespace) == ("lease-x", "ns")
    assert store.spec == LeaseSpec(
        holderIdentity="a",
        acquireTime=START + timedelta(seconds=1),
        renewTime=START + timedelta(seconds=1),
        leaseDurationSeconds=20,
        leaseTransitions=0,
    )


def test_the_lease_lasts_15_seconds_unless_told() -> None:
    store = Store()
    _elector(store).try_acquire_or_renew()
    assert store.spec.leaseDurationSeconds == 15


def test_a_new_elector_leads_nothing_and_releases_nothing() -> None:
    store = Store(_held("a"))  # a restarted replica of the same identity, say
    elector = _elector(store)
    assert elector.leading is False and elector.holds() is False
    elector.release()
    assert store.writes == 0


def test_a_lease_created_by_another_replica_first_is_not_ours() -> None:
    store = Store()
    store.fail["create"] = 409
    elector = _elector(store)
    assert elector.try_acquire_or_renew() is False and elector.leading is False
    store.fail["create"] = 500
    with pytest.raises(ApiError):
        elector.try_acquire_or_renew()


def test_renewing_keeps_the_acquire_time_and_the_transitions() -> None:
    store = Store()
    elector = _elector(store)
    elector.try_acquire_or_renew()
    elector.try_acquire_or_renew()
    assert store.spec.acquireTime == START + timedelta(seconds=1)
    assert store.spec.renewTime == START + timedelta(seconds=2)
    assert store.spec.leaseTransitions == 0


def test_holds_counts_from_the_renewal_on_our_clock() -> None:
    clock = Clock()
    elector = _elector(Store(), clock=clock)
    elector.try_acquire_or_renew()
    clock.now += 14.9
    assert elector.holds() is True
    clock.now += 0.1
    assert elector.holds() is False


@pytest.mark.parametrize("holder", ["", None])
def test_a_released_lease_is_taken_at_once(holder: str | None) -> None:
    store = Store(_held(holder))
    assert _elector(store, "b").try_acquire_or_renew() is True
    assert store.spec.holderIdentity == "b"


def test_the_holders_own_duration_is_waited_out_not_ours() -> None:
    store, clock = Store(_held("a", duration=30)), Clock()
    b = _elector(store, "b", clock)
    assert b.try_acquire_or_renew() is False
    clock.now += 16  # past our 15 s, not past its 30 s
    assert b.try_acquire_or_renew() is False
    clock.now += 15
    assert b.try_acquire_or_renew() is True


def test_taking_over_writes_the_new_holder_times_and_transition(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store, clock = Store(_held("old", duration=30, transitions=3)), Clock()
    b = _elector(store, "b", clock)
    b.try_acquire_or_renew()
    clock.now += 31
    with caplog.at_level(logging.INFO, logger="together_autoscaler.leader"):
        assert b.try_acquire_or_renew() is True
    assert store.spec == LeaseSpec(
        holderIdentity="b",
        acquireTime=START + timedelta(seconds=2),
        renewTime=START + timedelta(seconds=2),
        leaseDurationSeconds=15,
        leaseTransitions=4,
    )
    assert [r.getMessage() for r in caplog.records] == ["taking the Lease ns/lease-x from 'old'"]


def test_a_lease_with_no_transitions_counted_gets_its_first(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store = Store(_held("", transitions=None))
    with caplog.at_level(logging.INFO, logger="together_autoscaler.leader"):
        _elector(store, "b").try_acquire_or_renew()
    assert store.spec.leaseTransitions == 1
    assert [r.getMessage() for r in caplog.records] == ["taking the Lease ns/lease-x from None"]


def test_release_empties_holder_and_renew_time() -> None:
    store = Store()
    elector = _elector(store)
    elector.try_acquire_or_renew()
    elector.release()
    assert elector.leading is False and elector.holds() is False
    assert (store.spec.holderIdentity, store.spec.renewTime) == (None, None)


def test_release_leaves_a_lease_it_does_not_hold() -> None:
    store = Store()
    elector = _elector(store)
    elector.try_acquire_or_renew()
    store.lease = _held("b")
    writes = store.writes
    elector.release()
    assert store.writes == writes and store.spec.holderIdentity == "b"
    elector.try_acquire_or_renew()  # b's lease, not expired on our clock: not ours
    store.lease = Lease(metadata=ObjectMeta(name="lease-x", namespace="ns"), spec=None)
    elector.leading = True
    elector.release()  # a Lease with no spec: nothing to release, nothing raised


def test_a_release_the_api_refuses_is_logged_not_raised(caplog: pytest.LogCaptureFixture) -> None:
    store = Store()
    elector = _elector(store)
    elector.try_acquire_or_renew()
    store.fail["replace"] = 500
    with caplog.at_level(logging.WARNING, logger="together_autoscaler.leader"):
        elector.release()
    assert [r.getMessage() for r in caplog.records] == [
        "could not release the Lease ns/lease-x: nope"
    ]


def test_the_lease_is_named_together_autoscaler_unless_told() -> None:
    """The name every replica of a release shares by default, so that only one acts (a replica
    of another version under another name would elect itself alone)."""
    client: Any = Store()
    assert LeaseElector(client, "ns", "a").name == "together-autoscaler"
