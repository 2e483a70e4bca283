"""One exception hierarchy for everything that talks to Together.

Every error a caller can see descends from :class:`TogetherError`, so
``except TogetherError`` is always enough. Each error may carry the HTTP
``status`` that caused it, the request ``field`` it is about and a ``fix`` a
human can act on. Messages never contain the API key: the client redacts the
key from anything the server echoes before building an error.
"""

from __future__ import annotations

__all__ = [
    "ApiConnectionError",
    "AuthenticationError",
    "DeadlineExceededError",
    "InvalidRequestError",
    "NotFoundError",
    "OutOfCapacityError",
    "ProvisioningFailedError",
    "RateLimitedError",
    "ServerError",
    "SpecError",
    "TogetherError",
    "VolumeInUseError",
    "VolumeNotAvailableError",
]


class TogetherError(Exception):
    """Root of every error raised by the Together client, waiters and provider.

    ``str(error)`` is the message followed by the fix (when there is one), so a
    log line or a Pulumi diagnostic is actionable on its own.
    """

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        field: str | None = None,
        fix: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.field = field
        self.fix = fix

    def __str__(self) -> str:
        if self.fix:
            return f"{self.message} (fix: {self.fix})"
        return self.message

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r}, status={self.status!r})"


class AuthenticationError(TogetherError):
    """The API key is missing, wrong or lacks access (HTTP 401/403)."""


class NotFoundError(TogetherError):
    """The cluster does not exist (HTTP 404). Callers decide whether that is fine."""


class OutOfCapacityError(TogetherError):
    """Together has no standard capacity for this GPU type in this region (HTTP 409)."""


class InvalidRequestError(TogetherError):
    """The server rejected the request body (HTTP 400/422); carries the server's message."""


class RateLimitedError(TogetherError):
    """Too many requests (HTTP 429), still failing after the retry policy gave up."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = 429,
        field: str | None = None,
        fix: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message, status=status, field=field, fix=fix)
        self.retry_after = retry_after


class ServerError(TogetherError):
    """Together answered with a 5xx (or 408) after every retry."""


class ApiConnectionError(TogetherError):
    """The request never got an answer (connect/read failure) after every retry."""


class ProvisioningFailedError(TogetherError):
    """A cluster went to ``Deleting`` or to a ``*_FAILED`` phase while we waited for it."""

    def __init__(
        self,
        message: str,
        *,
        cluster_id: str,
        cluster_status: str | None = None,
        phase: str | None = None,
        fix: str | None = None,
    ) -> None:
        super().__init__(message, fix=fix)
        self.cluster_id = cluster_id
        self.cluster_status = cluster_status
        self.phase = phase


class DeadlineExceededError(TogetherError):
    """A waiter ran out of time; ``last_status`` is what the cluster said last."""

    def __init__(
        self,
        message: str,
        *,
        cluster_id: str,
        last_status: str | None = None,
        fix: str | None = None,
    ) -> None:
        super().__init__(message, fix=fix)
        self.cluster_id = cluster_id
        self.last_status = last_status


class SpecError(TogetherError):
    """A user's resource spec breaks a rule; raised before any API call.

    ``resource`` is the Pulumi resource name and ``field`` the offending input,
    so the message can read "cluster 'train': num_gpus=0 ...".
    """

    def __init__(
        self,
        message: str,
        *,
        resource: str | None = None,
        field: str | None = None,
        fix: str | None = None,
    ) -> None:
        super().__init__(message, field=field, fix=fix)
        self.resource = resource


class VolumeInUseError(TogetherError):
    """A shared volume cannot be deleted while a cluster uses it (HTTP 409)."""


class VolumeNotAvailableError(TogetherError):
    """A shared volume did not become usable: it failed, is being deleted, vanished, or the wait
    timed out (``timed_out``); ``last_status`` is what it said last."""

    def __init__(
        self,
        message: str,
        *,
        volume_id: str,
        last_status: str | None = None,
        timed_out: bool = False,
        fix: str | None = None,
    ) -> None:
        super().__init__(message, fix=fix)
        self.volume_id = volume_id
        self.last_status = last_status
        self.timed_out = timed_out
