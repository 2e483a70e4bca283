"""Together's GPU clusters API as Python (wire schema, client, retries, errors; public: `__all__`),
the layer the provider, the simulator and the autoscaler share: it imports no Pulumi and no
provider code, and httpx and pydantic load only with the client or a wire model."""

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
