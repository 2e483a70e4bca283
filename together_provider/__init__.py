"""Together AI GPU clusters as code: a Pulumi dynamic provider with a preemptible target.

The public API is re-exported here; modules prefixed with `_` and the simulator are internal.
"""

from together_api.errors import (
    ApiConnectionError,
    AuthenticationError,
    DeadlineExceededError,
    InvalidRequestError,
    NotFoundError,
    OutOfCapacityError,
    ProvisioningFailedError,
    RateLimitedError,
    ServerError,
    SpecError,
    TogetherError,
)
from together_provider.resource import Cluster, ClusterArgs

__all__ = [
    "ApiConnectionError",
    "AuthenticationError",
    "Cluster",
    "ClusterArgs",
    "DeadlineExceededError",
    "InvalidRequestError",
    "NotFoundError",
    "OutOfCapacityError",
    "ProvisioningFailedError",
    "RateLimitedError",
    "ServerError",
    "SpecError",
    "TogetherError",
]
