"""The native plugin's resources for a Python program: `from together_provider.native import
Cluster, ClusterArgs` is the one-import switch from the dynamic ones. The plugin itself, the
`pulumi-resource-together` console script, is `together_provider.hosts.native`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from together_provider import registry as _registry
from together_provider.framework.kind import PACKAGE as PACKAGE

# Type checkers read the generated classes; at run time they load on first use (PEP 562), and
# hiding `__getattr__` from the checker keeps a misspelled name an error.
if TYPE_CHECKING:
    from together_provider.hosts.native.resources import *  # noqa: F403
else:
    __getattr__ = _registry.lazy_classes(__name__, "together_provider.hosts.native.resources")

__all__ = sorted(["PACKAGE", *_registry.EXPORTS])
