"""Together's GPU clusters API as Python: wire schema, httpx client, retry policy, errors.

This layer knows nothing of Pulumi or of the provider: the provider and the simulator both build
on it, and importing it loads neither. The public API is re-exported here (`__all__`): the
client, its retry policy and fix wording, every error, the kubeconfig decoder and the wire
models a caller hands to or gets from the client. Importing the package is cheap: the client and
the wire models (which need httpx and pydantic) load on first use, so a Pulumi preview that only
checks and diffs never pays for them.

Modules: `client` (one method per endpoint) over `_transport` (auth, retries, HTTP errors) and
`waiters` (poll until Ready, available or gone); `wire` (the pydantic models); `values` (the
API's enumerations, no pydantic); `retry`; `errors`; `hints` (the caller's words in the fixes);
`kubeconfig`; `packing` (pending pods onto 8-GPU nodes, for both autoscalers).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from together_api import errors as _errors
from together_api.errors import *  # noqa: F403 (the error tree, whole)
from together_api.hints import FixHints
from together_api.kubeconfig import KubeconfigError, decode_kube_config
from together_api.retry import RetryPolicy

if TYPE_CHECKING:
    from together_api.client import TogetherClient as TogetherClient
    from together_api.wire import DEFAULT_BASE_URL as DEFAULT_BASE_URL
    from together_api.wire import Cluster as Cluster
    from together_api.wire import ClusterCreateRequest as ClusterCreateRequest
    from together_api.wire import ClusterStatus as ClusterStatus
    from together_api.wire import ClusterUpdateRequest as ClusterUpdateRequest
    from together_api.wire import Region as Region
    from together_api.wire import SharedVolume as SharedVolume
    from together_api.wire import VolumeCreateRequest as VolumeCreateRequest
    from together_api.wire import VolumeStatus as VolumeStatus

_LAZY = {
    "TogetherClient": "together_api.client",
    **dict.fromkeys(
        (
            "DEFAULT_BASE_URL",
            "Cluster",
            "ClusterCreateRequest",
            "ClusterStatus",
            "ClusterUpdateRequest",
            "Region",
            "SharedVolume",
            "VolumeCreateRequest",
            "VolumeStatus",
        ),
        "together_api.wire",
    ),
}
"""Public names that need httpx or pydantic -> the module they load from on first use."""


def __getattr__(name: str) -> Any:
    """The client and the wire models on first use (PEP 562)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = [
    "DEFAULT_BASE_URL",
    "Cluster",
    "ClusterCreateRequest",
    "ClusterStatus",
    "ClusterUpdateRequest",
    "FixHints",
    "KubeconfigError",
    "Region",
    "RetryPolicy",
    "SharedVolume",
    "TogetherClient",
    "VolumeCreateRequest",
    "VolumeStatus",
    "decode_kube_config",
]
__all__ += _errors.__all__
