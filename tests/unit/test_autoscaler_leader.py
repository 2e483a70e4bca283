"""`together_autoscaler.leader` over a stand-in for the API server's Lease storage that keeps
its one rule, optimistic concurrency (a write with a stale ``resourceVersion`` is 409), on fake
clocks. The real API server's version of this is tests/integration/test_autoscaler_behaviour.py."""

from __future__ import annotations

import copy
from typing import Any

import httpx2
from lightkube import ApiError
from lightkube.models.meta_v1 import Status
from lightkube.resources.coordination_v1 import Lease

from together_autoscaler.leader import LeaseElector


def _error(code: int) -> ApiError:
    return ApiError(httpx2.Request("GET", "https://k"), status=Status(code=code, message="no"))


class LeaseStore:
    def __init__(self) -> None:
        self.lease: Lease | None = None
        self.version = 0
        self.before_next_write: Any = None
        """Run once, between a replica's read and its write: another replica's turn."""

    def get(self, res: type, name: str, *, namespace: str) -> Lease:
        if self.lease is None:
            raise _error(404)
        return copy.deepcopy(self.lease)

    def create(self, lease: Lease) -> Lease:
        if self.lease is not None:
            raise _error(409)
        return self._store(lease)

    def replace(self, lease: Lease) -> Lease:
        if self.before_next_write is not None:
            turn, self.before_next_write = self.before_next_write, None
            turn()
        assert lease.metadata is not None and self.lease is not None
        if lease.metadata.resourceVersion != str(self.version):
            raise _error(409)
        return self._store(lease)

    def _store(self, lease: Lease) -> Lease:
        self.version += 1
        self.lease = copy.deepcopy(lease)
        assert self.lease.metadata is not None
        self.lease.metadata.resourceVersion = str(self.version)
        return self.lease


class Clock:
    now = 0.0

    def __call__(self) -> float:
        return self.now


def elector(store: LeaseStore, identity: str, clock: Clock) -> LeaseElector:
    client: Any = store
    return LeaseElector(client, "ns", identity, lease_seconds=15, clock=clock)


def test_one_holder_renews_another_waits_out_the_lease_then_takes_it() -> None:
    store, ca, cb = LeaseStore(), Clock(), Clock()
    a, b = elector(store, "a", ca), elector(store, "b", cb)
    assert a.try_acquire_or_renew() is True
    assert b.try_acquire_or_renew() is False
    cb.now += 14
    assert a.try_acquire_or_renew() is True  # renewed: b's wait starts again
    cb.now += 14
    assert b.try_acquire_or_renew() is False
    cb.now += 16
    assert b.try_acquire_or_renew() is True
    assert store.lease is not None and store.lease.spec is not None
    assert (store.lease.spec.holderIdentity, store.lease.spec.leaseTransitions) == ("b", 1)
    assert a.try_acquire_or_renew() is False


def test_of_two_replicas_taking_an_expired_lease_at_once_exactly_one_wins() -> None:
    store, clock = LeaseStore(), Clock()
    gone, a, b = (elector(store, name, clock) for name in ("gone", "a", "b"))
    assert gone.try_acquire_or_renew() is True  # then it stops renewing
    assert a.try_acquire_or_renew() is False and b.try_acquire_or_renew() is False
    clock.now += 16
    won: list[bool] = []
    store.before_next_write = lambda: won.append(b.try_acquire_or_renew())  # b writes first
    assert a.try_acquire_or_renew() is False  # a's write carries the version it read: 409
    assert won == [True]
    assert store.lease is not None and store.lease.spec is not None
    assert store.lease.spec.holderIdentity == "b"


def test_the_lease_is_held_until_lease_seconds_after_the_renewal_began() -> None:
    store, clock = LeaseStore(), Clock()
    a, b = elector(store, "a", clock), elector(store, "b", clock)
    assert a.holds() is False  # never renewed
    assert a.try_acquire_or_renew() is True
    assert b.try_acquire_or_renew() is False  # b sees the renewal at 0
    clock.now = 14.9
    assert a.holds() is True
    clock.now = 15.0  # b may take the Lease now
    assert a.holds() is False
    assert b.try_acquire_or_renew() is True
    assert a.try_acquire_or_renew() is False and a.holds() is False


def test_release_hands_the_lease_over_at_once() -> None:
    store, clock = LeaseStore(), Clock()
    a, b = elector(store, "a", clock), elector(store, "b", clock)
    assert a.try_acquire_or_renew() is True
    a.release()
    assert b.try_acquire_or_renew() is True
