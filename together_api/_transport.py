"""The HTTP transport under `TogetherClient`. Private. Transport concerns (bearer auth, timeouts,
retries, HTTP failures mapped onto :mod:`together_facts.errors`) live here and nowhere else."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import Any, Final, TypeVar

import httpx
import pydantic

from together_api.resend import send_with_retry
from together_api.retry import (
    RETRYABLE_STATUSES,
    Clock,
    RetryDecision,
    RetryPolicy,
    Sleep,
    retry_after,
    retryable_status,
)
from together_api.wire import ErrorBody
from together_facts.errors import (
    ApiConnectionError,
    ApiError,
    AuthenticationError,
    InvalidRequestError,
    NotFoundError,
    OutOfCapacityError,
    RateLimitedError,
    ServerError,
    UnexpectedResponseError,
    VolumeInUseError,
)
from together_facts.hints import FixHints
from together_facts.values import DEFAULT_BASE_URL

__all__ = ["RETRYABLE_STATUSES", "Transport"]

log = logging.getLogger("together_api.client")
M = TypeVar("M", bound=pydantic.BaseModel)

CONFLICTS: Final[Mapping[type[ApiError], tuple[str | None, str]]] = {
    OutOfCapacityError: (None, "try another region or GPU type, fewer GPUs, or retry later"),
    VolumeInUseError: (
        "volume_id",
        "delete the clusters that use it first (see clusters_using_volume), or keep it",
    ),
}
"""What a 409 means depends on the endpoint: the error type a request names as its `conflict`,
with the field and fix it reports. Out of capacity by default; "attached" for a volume DELETE."""


def _rate_limit(response: httpx.Response) -> RetryDecision | None:
    """A 429 was refused before any work: safe to resend, after its `Retry-After`."""
    if response.status_code != 429:
        return None
    return RetryDecision(retry_after(response.headers))


def _normalise_base_url(url: str) -> str:
    """Accept the SDK's bare host form (``https://api.together.ai``) as well as ``.../v1``."""
    url = url.rstrip("/")
    if httpx.URL(url).path in ("", "/"):
        url += "/v1"
    return url


class Transport:
    """One authenticated httpx client plus the retry policy, the clock and the request count.

    ``sleep`` and ``clock`` are used both between retries and by the waiters, so tests drive
    every timing path with a fake clock and no real sleeping. ``requests_made`` counts HTTP
    requests actually sent, retries included. ``hints`` is the caller's wording in the fixes.
    The API key never leaves the ``Authorization`` header: `_redact` takes it out of anything the
    server echoes into an exception, and no log line or ``repr`` carries it.
    """

    def __init__(
        self,
        api_key: str | None,
        base_url: str | None,
        *,
        timeout: float,
        retry: RetryPolicy | None,
        transport: httpx.BaseTransport | None,
        sleep: Sleep,
        clock: Clock,
        hints: FixHints,
    ) -> None:
        self.hints = hints
        key = api_key if api_key is not None else os.environ.get("TOGETHER_API_KEY")
        if not key:
            raise AuthenticationError("no Together API key was given", fix=hints.api_key)
        self._api_key = key
        given = base_url or os.environ.get("TOGETHER_BASE_URL")
        self.base_url = _normalise_base_url(given or DEFAULT_BASE_URL)
        # With no base URL the requests go to Together itself, which is right for a user of
        # Together and a surprise for one who meant the simulator: an error then says so.
        self._to_together_by_default = not given
        self.retry = retry or RetryPolicy()
        self.requests_made = 0
        self.sleep = sleep
        self.clock = clock
        self._http = httpx.Client(
            base_url=self.base_url,
            headers={"Authorization": f"Bearer {key}", "Accept": "application/json"},
            timeout=timeout,
            transport=transport,
        )

    def close(self) -> None:
        self._http.close()

    def request(
        self,
        method: str,
        path: str,
        *,
        json: dict[str, Any] | None = None,
        params: dict[str, str] | None = None,
        conflict: type[ApiError] = OutOfCapacityError,
    ) -> Any:
        """Send one request under the retry policy; the JSON body, or the error it maps to
        (`conflict`: what a 409 from this endpoint means)."""

        def send() -> httpx.Response:
            self.requests_made += 1
            return self._http.request(method, path, json=json, params=params)

        def on_retry(attempt: int, what: str, wait: float) -> None:
            log.warning(
                "%s %s: %s; retry %d in %.1fs", method, path, self._redact(what), attempt, wait
            )

        try:
            response = send_with_retry(
                send,
                policy=self.retry,
                idempotent=method != "POST",
                rate_limit=_rate_limit,
                retryable=lambda answer: retryable_status(answer.status_code),
                sleep=self.sleep,
                clock=self.clock,
                on_retry=on_retry,
            )
        except httpx.TransportError as exc:
            raise ApiConnectionError(
                f"{method} {self.base_url}{path}: no answer: "
                + self._redact(f"{type(exc).__name__}: {exc}"),
                fix=f"check the network and the base URL, {self.hints.base_url}; "
                "the request may be retried",
            ) from None
        log.debug("%s %s -> %d", method, path, response.status_code)
        if response.is_success:
            return response.json() if response.content else {}
        raise self._error(method, path, response, conflict)

    def _redact(self, text: str) -> str:
        return text.replace(self._api_key, "***")

    def _error(
        self, method: str, path: str, response: httpx.Response, conflict: type[ApiError]
    ) -> ApiError:
        status = response.status_code
        server_message: str | None = None
        param: str | None = None
        try:
            body = ErrorBody.model_validate(response.json())
            server_message, param = body.text, body.param
        except (ValueError, pydantic.ValidationError):
            server_message = response.text[:500] or None
        detail = self._redact(server_message or response.reason_phrase or "no message")
        message = f"{method} {self.base_url}{path} failed with HTTP {status}: {detail}"
        if status in (401, 403):
            fix = f"check the API key; {self.hints.api_key}"
            if self._to_together_by_default:
                fix += (
                    f"; no base URL is set ({self.hints.base_url}), so this went to Together "
                    "itself: set one to use another endpoint, such as the simulator"
                )
            return AuthenticationError(message, status=status, fix=fix)
        if status == 404:
            return NotFoundError(message, status=status, fix=self.hints.not_found)
        if status == 409:
            field, fix = CONFLICTS[conflict]
            return conflict(message, status=status, field=field, fix=fix)
        if status in (400, 422):
            return InvalidRequestError(message, status=status, field=param)
        if status == 429:
            return RateLimitedError(
                message, status=status, retry_after=retry_after(response.headers)
            )
        if status == 408 or status >= 500:
            return ServerError(message, status=status, fix="retry later")
        return UnexpectedResponseError(message, status=status)

    def parse(self, model: type[M], body: Any) -> M:
        try:
            return model.model_validate(body)
        except pydantic.ValidationError as exc:
            raise UnexpectedResponseError(
                f"unexpected response from Together ({model.__name__}): {exc.error_count()} "
                "field error(s)"
            ) from None
