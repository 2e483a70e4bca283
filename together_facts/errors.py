"""One exception hierarchy for everything this project raises (drawn at `TogetherError`). It knows
nothing of Pulumi or of the provider: errors drawn with a module live with the code raising them."""

from __future__ import annotations

__all__ = [
    "ApiConnectionError",
    "ApiError",
    "AuthenticationError",
    "ClusterStateError",
    "DeadlineExceededError",
    "InputError",
    "InvalidRequestError",
    "NotFoundError",
    "OutOfCapacityError",
    "ProvisioningFailedError",
    "RateLimitedError",
    "ServerError",
    "SpecError",
    "TogetherError",
    "UnexpectedResponseError",
    "VolumeInUseError",
    "VolumeNotAvailableError",
]


class TogetherError(Exception):
    """Root of every error this project raises, so ``except TogetherError`` is always enough.

    Every error carries a ``message`` and, when there is one, a ``fix`` a human can act on and the
    ``field`` it is about. ``str(error)`` is the message followed by the fix, so a log line or a
    Pulumi diagnostic is actionable on its own. Messages never contain the API key: the client
    redacts it from anything the server echoes. The whole tree (tests/unit/test_errors.py holds it
    to every subclass in the project):

        TogetherError               root: every error of the API client, the waiters, the provider
        ├── ApiError                Together answered with an error, or not at all (``status``)
        │   ├── AuthenticationError     401/403: the key is missing, wrong or lacks access
        │   ├── NotFoundError           404: the cluster does not exist (callers decide if fine)
        │   ├── OutOfCapacityError      409: no standard capacity for this GPU type in this region
        │   ├── InvalidRequestError     400/422: the server rejected the body
        │   ├── RateLimitedError        429, still after the retry policy gave up
        │   ├── ServerError             5xx/408, still after every retry
        │   ├── ApiConnectionError      no answer at all (connect/read failure) after every retry
        │   ├── UnexpectedResponseError an answer that does not parse, or an unmapped status
        │   └── VolumeInUseError        409: a shared volume cannot be deleted while in use
        ├── ClusterStateError       a cluster or volume did not reach the state a waiter waited for
        │   ├── ProvisioningFailedError it went to Deleting or a *_FAILED phase, or disappeared
        │   ├── DeadlineExceededError   the waiter ran out of time
        │   └── VolumeNotAvailableError a shared volume did not become usable
        ├── KubeconfigError         kube_config is not a kubeconfig (together_api.kubeconfig)
        └── InputError              root of non-API errors: the user's input is wrong, nothing sent
            ├── SpecError               a resource spec breaks a rule (``resource``, ``field``)
            │   ├── ConfigError         the stack config (together_provider.stack_config)
            │   └── WorkloadSpecError   a workload's placement (together_provider.kubernetes)
            └── PriceInputError         an unusable price table, or preview JSON priced with it
                                        (together_facts.prices; the preview's PreviewInputError)
    """

    def __init__(self, message: str, *, field: str | None = None, fix: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        self.fix = fix

    def __str__(self) -> str:
        if self.fix:
            return f"{self.message} (fix: {self.fix})"
        return self.message

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r})"


class ApiError(TogetherError):
    """Together answered with an error, or not at all; ``status`` is the HTTP status, if any."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        field: str | None = None,
        fix: str | None = None,
    ) -> None:
        super().__init__(message, field=field, fix=fix)
        self.status = status

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r}, status={self.status!r})"


class AuthenticationError(ApiError):
    """The API key is missing, wrong or lacks access (HTTP 401/403)."""


class NotFoundError(ApiError):
    """The cluster does not exist (HTTP 404). Callers decide whether that is fine."""


class OutOfCapacityError(ApiError):
    """Together has no standard capacity for this GPU type in this region (HTTP 409)."""


class InvalidRequestError(ApiError):
    """The server rejected the request body (HTTP 400/422); carries the server's message."""


class RateLimitedError(ApiError):
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


class ServerError(ApiError):
    """Together answered with a 5xx (or 408) after every retry."""


class ApiConnectionError(ApiError):
    """The request never got an answer (connect/read failure) after every retry."""


class UnexpectedResponseError(ApiError):
    """Together answered something this client cannot read, or a status it does not map."""


class ClusterStateError(TogetherError):
    """A cluster (or a shared volume) did not reach the state a waiter waited for."""


class ProvisioningFailedError(ClusterStateError):
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


class DeadlineExceededError(ClusterStateError):
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


class InputError(TogetherError):
    """Root of the errors that are not about the API: the user's input (a spec, the stack config,
    a workload, a preview file) is wrong, and nothing was created or changed because of it."""


class SpecError(InputError):
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


class VolumeInUseError(ApiError):
    """A shared volume cannot be deleted while a cluster uses it (HTTP 409)."""


class VolumeNotAvailableError(ClusterStateError):
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
