"""Synchronous httpx client for Together's GPU clusters API.

Transport concerns live here and nowhere else: bearer auth, timeouts,
retries (one :class:`RetryPolicy`), mapping HTTP failures onto
:mod:`together_api.errors`, and the waiters that poll a cluster until it
is Ready or gone. The API key never leaves the ``Authorization`` header: it is
absent from ``repr``, logs and exception text (server echoes are redacted).
"""

from __future__ import annotations

import email.utils
import logging
import os
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any, Final, TypeVar

import httpx
import pydantic

from together_api.errors import (
    ApiConnectionError,
    ApiError,
    AuthenticationError,
    DeadlineExceededError,
    InvalidRequestError,
    NotFoundError,
    OutOfCapacityError,
    ProvisioningFailedError,
    RateLimitedError,
    ServerError,
    TogetherError,
    UnexpectedResponseError,
    VolumeInUseError,
    VolumeNotAvailableError,
)
from together_api.retry import Clock, RetryDecision, RetryPolicy, Sleep, call_with_retry
from together_api.wire import (
    DEFAULT_BASE_URL,
    Cluster,
    ClusterCreateRequest,
    ClusterList,
    ClusterStatus,
    ClusterUpdateRequest,
    ErrorBody,
    Region,
    RegionList,
    SharedVolume,
    VolumeCreateRequest,
    VolumeDeleteResponse,
    VolumeList,
    VolumeUpdateRequest,
)

__all__ = ["TogetherClient"]

log = logging.getLogger(__name__)
M = TypeVar("M", bound=pydantic.BaseModel)

API_KEY_FIX: Final = "set together:apiKey as a secret or TOGETHER_API_KEY"
_VOLUMES: Final = "/compute/clusters/storage/volumes"
RETRYABLE_STATUSES: Final = frozenset({408, 429, 500, 502, 503, 504})
_NEVER_SENT: Final = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)
_TRANSIENT: Final = (ServerError, RateLimitedError, ApiConnectionError)
"""Errors a waiter's poll may skip: each already survived the request's own retries."""


class _RetryableStatus(Exception):
    """Internal: a response whose status the policy may retry."""

    def __init__(self, response: httpx.Response) -> None:
        super().__init__(response.status_code)
        self.response = response


def _normalise_base_url(url: str) -> str:
    """Accept the SDK's bare host form (``https://api.together.ai``) as well as ``.../v1``."""
    url = url.rstrip("/")
    if httpx.URL(url).path in ("", "/"):
        url += "/v1"
    return url


def _retry_after(response: httpx.Response) -> float | None:
    """Seconds from ``Retry-After`` (delta or HTTP date) or ``Retry-After-Ms``.

    A header that is neither (``soon``) counts as absent: the policy's own backoff applies, and
    a server's typo never escapes as a ``ValueError``.
    """
    millis = response.headers.get("retry-after-ms")
    if millis:
        try:
            return float(millis) / 1000
        except ValueError:
            pass
    value = response.headers.get("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


class TogetherClient:
    """Talks to ``/compute/clusters``, ``/compute/regions`` and the shared-volume endpoints.

    ``sleep`` and ``clock`` are used both between retries and by the waiters,
    so tests drive every timing path with a fake clock and no real sleeping.
    ``requests_made`` counts HTTP requests actually sent, retries included.
    """

    def __init__(
        self,
        api_key: str | None = None,
        base_url: str | None = None,
        *,
        timeout: float = 30.0,
        retry: RetryPolicy | None = None,
        transport: httpx.BaseTransport | None = None,
        sleep: Sleep = time.sleep,
        clock: Clock = time.monotonic,
    ) -> None:
        key = api_key if api_key is not None else os.environ.get("TOGETHER_API_KEY")
        if not key:
            raise AuthenticationError("no Together API key was given", fix=API_KEY_FIX)
        self._api_key = key
        self.base_url = _normalise_base_url(
            base_url or os.environ.get("TOGETHER_BASE_URL") or DEFAULT_BASE_URL
        )
        self.retry = retry or RetryPolicy()
        self.requests_made = 0
        self._sleep = sleep
        self._clock = clock
        self._http = httpx.Client(
            base_url=self.base_url,
            headers={"Authorization": f"Bearer {key}", "Accept": "application/json"},
            timeout=timeout,
            transport=transport,
        )

    def __repr__(self) -> str:
        return f"TogetherClient(base_url={self.base_url!r})"

    def sleep(self, seconds: float) -> None:
        """Wait on the client's own clock (fake in tests), e.g. between a caller's retries."""
        self._sleep(seconds)

    def clock(self) -> float:
        """Now, on the clock the retry deadlines and waiters use."""
        return self._clock()

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> TogetherClient:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # ------------------------------------------------------------------ endpoints

    def create_cluster(self, request: ClusterCreateRequest) -> Cluster:
        """Create a cluster; returns at once, usually still provisioning."""
        body = self._request("POST", "/compute/clusters", json=request.to_json())
        return self._parse(Cluster, body)

    def get_cluster(self, cluster_id: str) -> Cluster:
        """Fetch one cluster; :class:`NotFoundError` when it does not exist (any more)."""
        return self._parse(Cluster, self._request("GET", f"/compute/clusters/{cluster_id}"))

    def update_cluster(self, cluster_id: str, request: ClusterUpdateRequest) -> Cluster:
        """PUT only the fields set on ``request``; omitted fields keep their value."""
        body = self._request("PUT", f"/compute/clusters/{cluster_id}", json=request.to_json())
        return self._parse(Cluster, body)

    def list_clusters(self, project_id: str | None = None) -> list[Cluster]:
        params = {"projectId": project_id} if project_id else None
        body = self._request("GET", "/compute/clusters", params=params)
        return self._parse(ClusterList, body).clusters

    def delete_cluster(self, cluster_id: str) -> None:
        """Start deletion; :class:`NotFoundError` on 404 (the caller decides if that is fine)."""
        self._request("DELETE", f"/compute/clusters/{cluster_id}")

    def list_regions(self) -> list[Region]:
        return self._parse(RegionList, self._request("GET", "/compute/regions")).regions

    # ------------------------------------------------------------ shared volumes

    def create_volume(self, request: VolumeCreateRequest) -> SharedVolume:
        """Create a shared volume; it starts ``provisioning`` (see
        :meth:`wait_until_volume_available`)."""
        body = self._request("POST", _VOLUMES, json=request.to_json())
        return self._parse(SharedVolume, body)

    def get_volume(self, volume_id: str) -> SharedVolume:
        """One volume; :class:`NotFoundError` when it does not exist (any more)."""
        return self._parse(SharedVolume, self._request("GET", f"{_VOLUMES}/{volume_id}"))

    def list_volumes(self, project_id: str | None = None) -> list[SharedVolume]:
        params = {"projectId": project_id} if project_id else None
        return self._parse(VolumeList, self._request("GET", _VOLUMES, params=params)).volumes

    def resize_volume(self, volume_id: str, size_tib: int) -> SharedVolume:
        """Grow a volume to ``size_tib`` whole TiB (the id goes in the body, not the path)."""
        request = VolumeUpdateRequest(volume_id=volume_id, size_tib=size_tib)
        return self._parse(SharedVolume, self._request("PUT", _VOLUMES, json=request.to_json()))

    def delete_volume(self, volume_id: str) -> None:
        """Delete a volume: :class:`VolumeInUseError` while a cluster uses it,
        :class:`NotFoundError` when it is already gone (the caller decides if that is fine)."""
        try:
            body = self._request("DELETE", f"{_VOLUMES}/{volume_id}")
        except OutOfCapacityError as conflict:  # 409 here means "attached", not "out of stock"
            raise VolumeInUseError(
                conflict.message,
                status=409,
                field="volume_id",
                fix="delete the clusters that use it first (see clusters_using_volume), or keep it",
            ) from None
        if not self._parse(VolumeDeleteResponse, body).success:
            raise TogetherError(f"DELETE {_VOLUMES}/{volume_id}: Together answered success=false")

    def clusters_using_volume(self, volume_id: str, project_id: str | None = None) -> list[Cluster]:
        """The clusters whose ``volumes`` name ``volume_id``: the volume object does not say."""
        return [
            cluster
            for cluster in self.list_clusters(project_id)
            if any(v.volume_id == volume_id for v in cluster.volumes)
        ]

    def wait_until_volume_available(self, volume_id: str, *, timeout: float) -> SharedVolume:
        """Poll until the volume is ``available`` or ``bound``.

        Raises :class:`VolumeNotAvailableError` when it fails, loses access, starts deleting or
        disappears, and (with ``timed_out=True``) after ``timeout`` seconds.
        """
        deadline = self._clock() + timeout
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
            remaining = deadline - self._clock()
            if remaining <= 0:
                raise VolumeNotAvailableError(
                    f"volume {volume_id} was not available in time (last status: {status})",
                    volume_id=volume_id,
                    last_status=status,
                    timed_out=True,
                    fix="raise the timeout; Together may still finish in the background",
                )
            self._sleep(min(self.retry.poll_interval(poll), remaining))
            poll += 1

    # -------------------------------------------------------------------- waiters

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
        deadline = self._clock() + timeout
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
        deadline = self._clock() + timeout
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
        self, deadline: float, poll: int, subject: str, id_: str, status: str | None, goal: str
    ) -> None:
        """Sleep one poll interval, or raise DeadlineExceededError (its `cluster_id` is `id_`,
        a volume's id for a volume) when the deadline has passed."""
        remaining = deadline - self._clock()
        if remaining <= 0:
            raise DeadlineExceededError(
                f"{subject} was not {goal} in time (last status: {status})",
                cluster_id=id_,
                last_status=status,
                fix="raise the timeout; Together may still finish in the background",
            )
        self._sleep(min(self.retry.poll_interval(poll), remaining))

    # ------------------------------------------------------------------ transport

    def _request(
        self,
        method: str,
        path: str,
        *,
        json: dict[str, Any] | None = None,
        params: dict[str, str] | None = None,
    ) -> Any:
        idempotent = method != "POST"

        def send() -> httpx.Response:
            self.requests_made += 1
            response = self._http.request(method, path, json=json, params=params)
            if response.status_code in RETRYABLE_STATUSES or response.status_code > 504:
                raise _RetryableStatus(response)
            return response

        def classify(exc: Exception) -> RetryDecision | None:
            if isinstance(exc, _NEVER_SENT):
                return RetryDecision()
            if isinstance(exc, _RetryableStatus) and exc.response.status_code == 429:
                # Rate limited means refused before any work: safe to retry, even a POST.
                return RetryDecision(_retry_after(exc.response))
            if not idempotent:
                return None
            if isinstance(exc, httpx.TransportError):
                return RetryDecision()
            if isinstance(exc, _RetryableStatus):
                return RetryDecision(_retry_after(exc.response))
            return None

        def on_retry(attempt: int, exc: Exception, wait: float) -> None:
            log.warning(
                "%s %s: %s; retry %d in %.1fs", method, path, self._describe(exc), attempt, wait
            )

        try:
            response = call_with_retry(
                send,
                policy=self.retry,
                classify=classify,
                sleep=self._sleep,
                clock=self._clock,
                on_retry=on_retry,
            )
        except _RetryableStatus as exc:
            response = exc.response
        except httpx.TransportError as exc:
            raise ApiConnectionError(
                f"{method} {path}: no answer from {self.base_url}: {self._describe(exc)}",
                fix="check the network and TOGETHER_BASE_URL; the request may be retried",
            ) from None
        log.debug("%s %s -> %d", method, path, response.status_code)
        if response.is_success:
            return response.json() if response.content else {}
        raise self._error(method, path, response)

    def _describe(self, exc: Exception) -> str:
        if isinstance(exc, _RetryableStatus):
            return f"HTTP {exc.response.status_code}"
        return self._redact(f"{type(exc).__name__}: {exc}")

    def _redact(self, text: str) -> str:
        return text.replace(self._api_key, "***")

    def _error(self, method: str, path: str, response: httpx.Response) -> ApiError:
        status = response.status_code
        server_message: str | None = None
        param: str | None = None
        try:
            body = ErrorBody.model_validate(response.json())
            server_message, param = body.text, body.param
        except (ValueError, pydantic.ValidationError):
            server_message = response.text[:500] or None
        detail = self._redact(server_message or response.reason_phrase or "no message")
        message = f"{method} {path} failed with HTTP {status}: {detail}"
        if status in (401, 403):
            return AuthenticationError(
                message, status=status, fix=f"check the API key; {API_KEY_FIX}"
            )
        if status == 404:
            return NotFoundError(message, status=status)
        if status == 409:
            return OutOfCapacityError(
                message,
                status=status,
                fix="try another region or GPU type, fewer GPUs, or retry later",
            )
        if status in (400, 422):
            return InvalidRequestError(message, status=status, field=param)
        if status == 429:
            return RateLimitedError(message, status=status, retry_after=_retry_after(response))
        if status == 408 or status >= 500:
            return ServerError(message, status=status, fix="retry later")
        return UnexpectedResponseError(message, status=status)

    def _parse(self, model: type[M], body: Any) -> M:
        try:
            return model.model_validate(body)
        except pydantic.ValidationError as exc:
            raise UnexpectedResponseError(
                f"unexpected response from Together ({model.__name__}): {exc.error_count()} "
                "field error(s)"
            ) from None
