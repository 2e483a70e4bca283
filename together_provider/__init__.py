"""Together AI GPU clusters as code: a Pulumi dynamic provider with a preemptible target.

The public API is re-exported here: each resource kind's classes (`Cluster`, `ClusterArgs`,
`SharedVolume`, `SharedVolumeArgs`, one pair per kind of `registry.KINDS`, generated into
`resources.py`) and every error of `together_api.errors`. Importing the package is cheap: the
resource classes (which need the Pulumi SDK) load on first use, so the field tables, the rules,
the lifecycles, the stack config and the PR preview can be imported without Pulumi's grpc and
dill. The layout is described in CONTRIBUTING.md.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from together_api import errors as _errors
from together_api.errors import *  # noqa: F403 (the error tree is re-exported whole, never copied)
from together_provider.registry import KINDS as _KINDS

if TYPE_CHECKING:
    from together_provider.resources import *  # noqa: F403

_LAZY = frozenset(name for kind in _KINDS for name in kind.exports)
"""Each kind's exported class names (generated into `together_provider.resources`)."""


def __getattr__(name: str) -> Any:
    """The resource classes on first use (PEP 562), so the import stays Pulumi-free."""
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.resources"), name)


__all__ = sorted([*_errors.__all__, *_LAZY])
