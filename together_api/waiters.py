"""The waiters: poll a cluster until it is Ready or gone, a volume until it is available or gone,
with the client's own GETs (so its retries) on its clock (fake in tests), each one `poll_until`."""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from typing import Any, Final, TypeVar

from together_api.poll import Known, Pace, poll_until
from together_api.retry import RetryPolicy
from together_api.wire import Cluster, ClusterStatus, SharedVolume
from together_facts.errors import (
    ApiConnectionError,
    ClusterStateError,
    DeadlineExceededError,
    NotFoundError,
    ProvisioningFailedError,
    RateLimitedError,
    ServerError,
    VolumeNotAvailableError,
)

__all__ = ["Waiters"]

log = logging.getLogger("together_api.client")

_TRANSIENT: Final = (ServerError, RateLimitedError, ApiConnectionError)
"""Errors a waiter's poll may skip: each already survived the request's own retries."""

T = TypeVar("T")
P = TypeVar("P", Cluster, SharedVolume)
"""An object that provisions: a cluster or a shared volume."""

_LATER: Final = "raise the timeout; Together may still finish in the background"
"""The fix of every waiter's timeout."""


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

    @property
    def pace(self) -> Pace:
        """Every wait's pace: the retry policy's `poll_interval` on this client's clock."""
        return Pace(self.retry.poll_interval, self.clock, self.sleep)

    def wait_until_volume_available(self, volume_id: str, *, timeout: float) -> SharedVolume:
        """Poll until the volume is ``available`` or ``bound``.

        Raises :class:`VolumeNotAvailableError` when it fails, loses access, starts deleting or
        disappears, and (with ``timed_out=True``) after ``timeout`` seconds.
        """

        def unusable(message: str, status: str | None, **more: Any) -> Exception:
            return VolumeNotAvailableError(
                f"volume {volume_id} {message}", volume_id=volume_id, last_status=status, **more
            )

        return self._until_usable(
            self.get_volume,
            "volume",
            volume_id,
            timeout=timeout,
            vanished=lambda status: unusable("disappeared while provisioning", status),
            broken=lambda volume: unusable(
                f"is {volume.status}, not available",
                volume.status,
                fix="delete it and create it again, or ask Together support",
            ),
            timed_out=lambda status: unusable(
                f"was not available in time (last status: {status})",
                status,
                timed_out=True,
                fix=_LATER,
            ),
            usable=lambda volume: volume.is_available,
        )

    def wait_until_ready(
        self,
        cluster_id: str,
        *,
        timeout: float,
        on_status: Callable[[Cluster], None] | None = None,
        known: Cluster | None = None,
    ) -> Cluster:
        """Poll until ``status == Ready``; ``on_status`` hears every status change; ``known``
        (e.g. the POST's answer) stands in for the first GET: one call fewer.

        Raises :class:`ProvisioningFailedError` when the latest phase is a
        ``*_FAILED`` one, the cluster goes to ``Deleting`` or disappears, and
        :class:`DeadlineExceededError` after ``timeout`` seconds.
        """

        def heard(cluster: Cluster) -> None:
            log.info("cluster %s is %s", cluster_id, cluster.status)
            if on_status is not None:
                on_status(cluster)

        return self._until_usable(
            self.get_cluster,
            "cluster",
            cluster_id,
            usable=lambda cluster: cluster.is_ready,
            timeout=timeout,
            vanished=lambda status: ProvisioningFailedError(
                f"cluster {cluster_id} disappeared while provisioning",
                cluster_id=cluster_id,
                cluster_status=status,
            ),
            broken=lambda cluster: ProvisioningFailedError(
                f"cluster {cluster_id} failed to provision: status {cluster.status}, "
                f"phase {cluster.latest_phase}",
                cluster_id=cluster_id,
                cluster_status=cluster.status,
                phase=cluster.latest_phase,
                fix="delete the cluster and create it again, or try another region",
            ),
            timed_out=self._deadline_exceeded(f"cluster {cluster_id}", cluster_id, "Ready"),
            progress=heard,
            first=None if known is None else Known(known),
        )

    def _until_usable(
        self,
        get: Callable[[str], P],
        noun: str,
        id_: str,
        *,
        usable: Callable[[P], bool],
        timeout: float,
        vanished: Callable[[str | None], Exception],
        broken: Callable[[P], Exception],
        timed_out: Callable[[str | None], Exception],
        progress: Callable[[P], None] | None = None,
        first: Known[P] | None = None,
    ) -> P:
        """Poll `get(id_)` (a `noun`) until `usable`: what a cluster and a volume share while
        they provision. Failed or Deleting is `broken` at once; a 404 is `vanished` (given the
        status last seen); `progress` hears each status change."""
        seen: list[str] = []

        def refresh() -> P:
            try:
                return get(id_)
            except NotFoundError as exc:
                raise vanished(seen[-1] if seen else None) from exc

        def heard(answer: P) -> None:
            seen.append(answer.status)
            if progress is not None:
                progress(answer)

        return self._poll(
            refresh,
            usable,
            subject=f"{noun} {id_}",
            timeout=timeout,
            timed_out=timed_out,
            state=lambda answer: answer.status,
            progress=heard,
            failed=lambda answer: (
                broken(answer) if answer.is_failed or answer.is_deleting else None
            ),
            first=first,
        )

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

        Meant for right after a DELETE, which never completes at once: the DELETE's `Deleting`
        stands for the first answer, so it waits one poll interval before the first GET instead
        of spending a call on a certain `Deleting`.
        """

        def status() -> str | None:
            try:
                return get(id_).status
            except NotFoundError:
                return None

        subject = f"{kind} {id_}"
        self._poll(
            status,
            lambda now: now is None,
            subject=subject,
            timeout=timeout,
            timed_out=self._deadline_exceeded(subject, id_, "deleted"),
            state=lambda now: now,
            first=Known[str | None](ClusterStatus.DELETING),
        )

    def outlast_faults(self, call: Callable[[], T], *, subject: str) -> T:
        """`call`'s answer; a call lost to a transient error (after its requests' own retries) is
        made again after a poll's pause, up to `RetryPolicy.poll_failures` times in a row.

        What a poll does, for the calls a create hangs on: the duplicate guard's name lookup and
        the POST with its lookups. Each is safe to make again, and losing one would otherwise
        cost the whole `up` (issue 12's goal: a fault costs a pause, not an `up`). The last
        error is raised as it came, so an API that stays down still fails with its own words.
        """
        return self._poll(
            call,
            lambda _answer: True,
            subject=subject,
            timeout=math.inf,  # bounded by the skips, and each call by its own retry deadline
            timed_out=lambda _state: AssertionError("an endless wait timed out"),
        )

    def _poll(self, refresh: Callable[[], T], target: Callable[[T], bool], **how: Any) -> T:
        """`poll_until` at this client's pace, skipping polls lost to transient errors."""
        answer: T = poll_until(
            refresh, target, pace=self.pace, skip=_TRANSIENT, skips=self.retry.poll_failures, **how
        )
        return answer

    @staticmethod
    def _deadline_exceeded(
        subject: str, id_: str, goal: str
    ) -> Callable[[str | None], ClusterStateError]:
        """A cluster waiter's timeout; a volume's id stands in `cluster_id` for a volume."""
        return lambda status: DeadlineExceededError(
            f"{subject} was not {goal} in time (last status: {status})",
            cluster_id=id_,
            last_status=status,
            fix=_LATER,
        )
