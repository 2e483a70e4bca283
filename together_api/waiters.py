"""The waiters: poll a cluster until it is Ready or gone, a volume until it is available or gone,
with the client's own GETs (so its retries) on its clock (fake in tests)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Final

from together_api.errors import (
    ApiConnectionError,
    ApiError,
    ClusterStateError,
    DeadlineExceededError,
    NotFoundError,
    ProvisioningFailedError,
    RateLimitedError,
    ServerError,
    VolumeNotAvailableError,
)
from together_api.retry import RetryPolicy
from together_api.wire import Cluster, ClusterStatus, SharedVolume

__all__ = ["Waiters"]

log = logging.getLogger("together_api.client")

_TRANSIENT: Final = (ServerError, RateLimitedError, ApiConnectionError)
"""Errors a waiter's poll may skip: each already survived the request's own retries."""

TimedOut = Callable[[str, str, str | None, str], ClusterStateError]
"""Builds a waiter's timeout error from (message, id, last status, fix)."""


def _deadline_exceeded(message: str, id_: str, status: str | None, fix: str) -> ClusterStateError:
    """Every waiter's timeout but one; a volume's id stands in `cluster_id` for a volume."""
    return DeadlineExceededError(message, cluster_id=id_, last_status=status, fix=fix)


def _volume_timed_out(message: str, id_: str, status: str | None, fix: str) -> ClusterStateError:
    """Waiting for a volume to be available, a timeout is one more way it did not become usable."""
    return VolumeNotAvailableError(
        message, volume_id=id_, last_status=status, timed_out=True, fix=fix
    )


class Waiters:
    """The polling half of `TogetherClient`, a mixin: every poll is one of the client's own GETs
    (so it has the client's retries), and the pause between polls is the retry policy's
    `poll_interval` on the client's clock. A poll lost to a transient error (each already survived
    the request's own retries) is skipped, up to `RetryPolicy.poll_failures` in a row."""

    retry: RetryPolicy

    def get_cluster(self, cluster_id: str) -> Cluster:
        raise NotImplementedError

    def get_volume(self, volume_id: str) -> SharedVolume:
        raise NotImplementedError

    def sleep(self, seconds: float) -> None:
        raise NotImplementedError

    def clock(self) -> float:
        raise NotImplementedError

    def wait_until_volume_available(self, volume_id: str, *, timeout: float) -> SharedVolume:
        """Poll until the volume is ``available`` or ``bound``.

        Raises :class:`VolumeNotAvailableError` when it fails, loses access, starts deleting or
        disappears, and (with ``timed_out=True``) after ``timeout`` seconds.
        """
        deadline = self.clock() + timeout
        poll = failed = 0
        status: str | None = None
        while True:
            try:
                volume = self.get_volume(volume_id)
                failed = 0
            except _TRANSIENT as exc:
                failed = self._skip_failed_poll(failed, exc, f"volume {volume_id}")
                volume = None
            except NotFoundError:
                raise VolumeNotAvailableError(
                    f"volume {volume_id} disappeared while provisioning",
                    volume_id=volume_id,
                    last_status=status,
                ) from None
            status = volume.status if volume is not None else status
            if volume is not None and volume.is_available:
                return volume
            if volume is not None and (volume.is_failed or volume.is_deleting):
                raise VolumeNotAvailableError(
                    f"volume {volume_id} is {status}, not available",
                    volume_id=volume_id,
                    last_status=status,
                    fix="delete it and create it again, or ask Together support",
                )
            self._wait_or_give_up(
                deadline,
                poll,
                f"volume {volume_id}",
                volume_id,
                status,
                "available",
                timed_out=_volume_timed_out,
            )
            poll += 1

    def wait_until_ready(
        self,
        cluster_id: str,
        *,
        timeout: float,
        on_status: Callable[[Cluster], None] | None = None,
        known: Cluster | None = None,
    ) -> Cluster:
        """Poll until ``status == Ready``; ``on_status`` hears every status change.

        Raises :class:`ProvisioningFailedError` when the latest phase is a
        ``*_FAILED`` one, the cluster goes to ``Deleting`` or disappears, and
        :class:`DeadlineExceededError` after ``timeout`` seconds.
        """
        deadline = self.clock() + timeout
        last_status: str | None = None
        poll = failed = 0
        while True:
            try:
                # `known` (e.g. the POST's answer) stands in for the first GET: one call fewer.
                cluster = known if known is not None else self.get_cluster(cluster_id)
                known = None
                failed = 0
            except NotFoundError as exc:
                raise ProvisioningFailedError(
                    f"cluster {cluster_id} disappeared while provisioning",
                    cluster_id=cluster_id,
                    cluster_status=last_status,
                ) from exc
            except _TRANSIENT as exc:
                failed = self._skip_failed_poll(failed, exc, f"cluster {cluster_id}")
                self._wait_or_give_up(
                    deadline, poll, f"cluster {cluster_id}", cluster_id, last_status, "Ready"
                )
                poll += 1
                continue
            if cluster.status != last_status:
                last_status = cluster.status
                log.info("cluster %s is %s", cluster_id, cluster.status)
                if on_status is not None:
                    on_status(cluster)
            if cluster.is_failed or cluster.is_deleting:
                raise ProvisioningFailedError(
                    f"cluster {cluster_id} failed to provision: status {cluster.status}, "
                    f"phase {cluster.latest_phase}",
                    cluster_id=cluster_id,
                    cluster_status=cluster.status,
                    phase=cluster.latest_phase,
                    fix="delete the cluster and create it again, or try another region",
                )
            if cluster.is_ready:
                return cluster
            self._wait_or_give_up(
                deadline, poll, f"cluster {cluster_id}", cluster_id, last_status, "Ready"
            )
            poll += 1

    def wait_until_deleted(self, cluster_id: str, *, timeout: float) -> None:
        """Poll until the cluster answers 404 (see `_wait_until_gone`)."""
        self._wait_until_gone("cluster", cluster_id, self.get_cluster, timeout)

    def wait_until_volume_deleted(self, volume_id: str, *, timeout: float) -> None:
        """Poll until the shared volume answers 404 (see `_wait_until_gone`)."""
        self._wait_until_gone("volume", volume_id, self.get_volume, timeout)

    def _wait_until_gone(
        self, kind: str, id_: str, get: Callable[[str], Cluster | SharedVolume], timeout: float
    ) -> None:
        """Poll `get` until it raises NotFoundError; polls lost to transient errors are skipped.

        Meant for right after a DELETE, which never completes at once: it waits one poll interval
        before the first GET instead of spending a call on a certain `Deleting`.
        """
        subject = f"{kind} {id_}"
        deadline = self.clock() + timeout
        status: str | None = ClusterStatus.DELETING
        poll = failed = 0
        while True:
            self._wait_or_give_up(deadline, poll, subject, id_, status, "deleted")
            poll += 1
            try:
                status = get(id_).status
                failed = 0
            except NotFoundError:
                return
            except _TRANSIENT as exc:
                failed = self._skip_failed_poll(failed, exc, subject)

    def _skip_failed_poll(self, failed: int, exc: ApiError, subject: str) -> int:
        """Count a poll lost to a transient error; re-raise once too many failed in a row."""
        failed += 1
        if failed > self.retry.poll_failures:
            raise exc
        log.warning("%s: poll failed (%s); polling on", subject, exc.message)
        return failed

    def _wait_or_give_up(
        self,
        deadline: float,
        poll: int,
        subject: str,
        id_: str,
        status: str | None,
        goal: str,
        *,
        timed_out: TimedOut = _deadline_exceeded,
    ) -> None:
        """Sleep one poll interval, or raise the `timed_out` error when the deadline has passed:
        DeadlineExceededError unless the waiter names another."""
        remaining = deadline - self.clock()
        if remaining <= 0:
            raise timed_out(
                f"{subject} was not {goal} in time (last status: {status})",
                id_,
                status,
                "raise the timeout; Together may still finish in the background",
            )
        self.sleep(min(self.retry.poll_interval(poll), remaining))
