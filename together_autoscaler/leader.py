"""Leader election through a ``coordination.k8s.io/v1`` Lease, as client-go's leaderelection does,
so that of the controller's replicas only one acts."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Final

from lightkube import ApiError, Client
from lightkube.models.coordination_v1 import LeaseSpec
from lightkube.models.meta_v1 import ObjectMeta
from lightkube.resources.coordination_v1 import Lease

__all__ = ["LEASE_NAME", "LeaseElector"]

LEASE_NAME: Final = "together-autoscaler"
log = logging.getLogger("together_autoscaler.leader")


class LeaseElector:
    """Only the replica holding the Lease acts. A replica takes the Lease when it is missing,
    already its own, or unchanged for its ``leaseDurationSeconds`` (``lease_seconds`` if unset) on
    the replica's own clock (client-go's rule: the holder's ``renewTime`` is another machine's
    clock, so it is never compared with ours). Every write carries the ``resourceVersion`` that
    was read, so of two replicas racing for the same Lease the API server lets exactly one win
    (409 Conflict for the other)."""

    def __init__(
        self,
        client: Client,
        namespace: str,
        identity: str,
        *,
        name: str = LEASE_NAME,
        lease_seconds: int = 15,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client, self.namespace, self.identity = client, namespace, identity
        self.name, self.lease_seconds, self.clock = name, lease_seconds, clock
        self._seen: tuple[str | None, str | None] | None = None
        self._seen_at = 0.0
        self.leading = False
        self.renewed_at: float | None = None
        """Our clock just before the last successful renewal's read: the lease runs from later."""

    def try_acquire_or_renew(self) -> bool:
        """One attempt; True while this replica holds the Lease."""
        started = self.clock()
        self.leading = self._attempt()
        self.renewed_at = started if self.leading else None
        return self.leading

    def holds(self) -> bool:
        """Whether the Lease is surely still ours (a local check, no I/O): renewed by the last
        attempt less than ``lease_seconds`` ago, so no other replica can have taken it yet."""
        return self.renewed_at is not None and self.clock() - self.renewed_at < self.lease_seconds

    def _attempt(self) -> bool:
        now = datetime.now(UTC)
        try:
            lease = self.client.get(Lease, self.name, namespace=self.namespace)
        except ApiError as error:
            if error.status.code != 404:
                raise
            return self._create(now)
        spec = lease.spec or LeaseSpec()
        record = (spec.holderIdentity, str(spec.renewTime))
        if record != self._seen:
            self._seen, self._seen_at = record, self.clock()
        held_by_other = spec.holderIdentity not in (None, "", self.identity)
        if held_by_other and self.clock() - self._seen_at < (
            spec.leaseDurationSeconds or self.lease_seconds
        ):
            return False
        if spec.holderIdentity != self.identity:
            spec.acquireTime = now
            spec.leaseTransitions = (spec.leaseTransitions or 0) + 1
            log.info("taking the Lease %s/%s from %r", self.namespace, self.name,
                     spec.holderIdentity or None)  # fmt: skip
        spec.holderIdentity = self.identity
        spec.renewTime = now
        spec.leaseDurationSeconds = self.lease_seconds
        lease.spec = spec
        try:
            self.client.replace(lease)
        except ApiError as error:
            if error.status.code == 409:  # another replica wrote first
                return False
            raise
        return True

    def _create(self, now: datetime) -> bool:
        lease = Lease(
            metadata=ObjectMeta(name=self.name, namespace=self.namespace),
            spec=LeaseSpec(
                holderIdentity=self.identity,
                acquireTime=now,
                renewTime=now,
                leaseDurationSeconds=self.lease_seconds,
                leaseTransitions=0,
            ),
        )
        try:
            self.client.create(lease)
        except ApiError as error:
            if error.status.code == 409:
                return False
            raise
        return True

    def release(self) -> None:
        """Give the Lease up (clean exit), if this replica holds it: the holder is emptied, so a
        successor takes over at its next try instead of after the lease."""
        if not self.leading:
            return
        self.leading, self.renewed_at = False, None
        try:
            lease = self.client.get(Lease, self.name, namespace=self.namespace)
            if lease.spec is not None and lease.spec.holderIdentity == self.identity:
                lease.spec.holderIdentity = None
                lease.spec.renewTime = None
                self.client.replace(lease)
        except ApiError as error:  # the next holder waits out the lease instead
            log.warning("could not release the Lease %s/%s: %s", self.namespace, self.name, error)
