"""Together AI GPU clusters as code: a Pulumi dynamic provider with a preemptible target.

The public API is re-exported here. Importing the package is cheap: `Cluster` and `ClusterArgs`
(which need the Pulumi SDK) load on first use, so the field table, the rules, the lifecycle, the
stack config and the PR preview can be imported without Pulumi's grpc and dill.

Modules: `cluster_schema` (the Cluster field table), `schema` and `validators` (the table
machinery), `rules` (what a change means) over `rulebook` (validate/check/plan for any schema),
`lifecycle` (create/adopt/update/read/delete, no Pulumi), `provider` and `resource` (the
dynamic-provider host) over `dynamic` (what every dynamic provider shares); the SharedVolume's
`volume_schema`, `volume_rules`, `volume_lifecycle`, `volume_provider` and `volume_resource`
likewise; `stack_config`, `docs` (the
README tables), `preview` (PR comments), `kubernetes` and `workloads` (need the `[kubernetes]`
extra). The simulator is the separate `together_sim` package (`[simulator]` extra).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from together_api.errors import (
    ApiConnectionError,
    ApiError,
    AuthenticationError,
    ClusterStateError,
    DeadlineExceededError,
    InputError,
    InvalidRequestError,
    NotFoundError,
    OutOfCapacityError,
    ProvisioningFailedError,
    RateLimitedError,
    ServerError,
    SpecError,
    TogetherError,
    UnexpectedResponseError,
)

if TYPE_CHECKING:
    from together_provider.resource import Cluster, ClusterArgs
    from together_provider.volume_resource import SharedVolume, SharedVolumeArgs

_LAZY = frozenset({"Cluster", "ClusterArgs"})
_LAZY_VOLUME = frozenset({"SharedVolume", "SharedVolumeArgs"})


def __getattr__(name: str) -> Any:
    """The resources on first use (PEP 562), so the import stays Pulumi-free."""
    if name in _LAZY:
        from together_provider import resource

        return getattr(resource, name)
    if name in _LAZY_VOLUME:
        from together_provider import volume_resource

        return getattr(volume_resource, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ApiConnectionError",
    "ApiError",
    "AuthenticationError",
    "Cluster",
    "ClusterArgs",
    "ClusterStateError",
    "DeadlineExceededError",
    "InputError",
    "InvalidRequestError",
    "NotFoundError",
    "OutOfCapacityError",
    "ProvisioningFailedError",
    "RateLimitedError",
    "ServerError",
    "SharedVolume",
    "SharedVolumeArgs",
    "SpecError",
    "TogetherError",
    "UnexpectedResponseError",
]
