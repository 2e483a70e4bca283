"""The native Pulumi plugin for Together: each kind of the registry as `together:index:<Kind>`
(`Cluster`, `SharedVolume`), for any language.

`from together_provider.native import Cluster, ClusterArgs, SharedVolume, SharedVolumeArgs` is
the one-import switch from the dynamic `together_provider` resources; the classes are generated
(`native/resources.py`) and load on first use. The plugin itself is the
`pulumi-resource-together` console script installed with this package
(`together_provider.native.plugin`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from together_provider.framework.kind import PACKAGE as PACKAGE
from together_provider.registry import KINDS as _KINDS

if TYPE_CHECKING:
    from together_provider.native.resources import *  # noqa: F403

_EXPORTS = frozenset(name for kind in _KINDS for name in kind.exports)


def __getattr__(name: str) -> Any:
    """The resource classes and their Args on first use (PEP 562)."""
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.resources"), name)


__all__ = sorted(["PACKAGE", *_EXPORTS])
