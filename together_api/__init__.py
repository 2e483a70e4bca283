"""Together's GPU clusters API as Python (the client and its wire models; public: `__all__`, with
the error tree and FixHints of `together_facts` that its callers catch and pass): no Pulumi, no
provider code; httpx and pydantic load only with the client or a wire model."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from together_api.kubeconfig import KubeconfigError, decode_kube_config
from together_api.retry import RetryPolicy
from together_facts import errors as _errors
from together_facts.errors import *  # noqa: F403 (the error tree, whole: what callers catch)
from together_facts.hints import FixHints
from together_facts.values import DEFAULT_BASE_URL

if TYPE_CHECKING:
    from together_api.client import TogetherClient as TogetherClient
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
"""Public names that need httpx or pydantic -> the module they load from on first use, so a
Pulumi preview that only checks and diffs never pays for them."""


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
