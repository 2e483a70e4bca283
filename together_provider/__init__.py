"""Together AI GPU clusters as code: a Pulumi dynamic provider with a preemptible target.

The public API is re-exported here: each resource kind's classes (`Cluster`, `ClusterArgs`,
`SharedVolume`, `SharedVolumeArgs`, from `kinds.KINDS`) and every error of
`together_api.errors`. Importing the package is cheap: the resource classes (which need the
Pulumi SDK) load on first use, so the field tables, the rules, the lifecycles, the stack config
and the PR preview can be imported without Pulumi's grpc and dill.

Layout (`ls together_provider`): `framework/` (the shared machinery: field tables, rulebook,
lifecycle contract, dynamic host, `Kind`), one package per resource kind with the same files
(`cluster/`, `volume/`), `registry.py` (the registry every consumer loops over), the native plugin
(`native/`), and the features: `stack_config`, `preview/` (PR comments), `docs` (generated
tables), `kubernetes` and `workloads` (need the `[kubernetes]` extra). `provider.py` and
`volume_provider.py` only keep old state loadable. The simulator is the separate `together_sim`
package (`[simulator]` extra).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from together_api import errors as _errors
from together_api.errors import *  # noqa: F403 (the error tree is re-exported whole, never copied)
from together_provider.registry import KINDS as _KINDS

if TYPE_CHECKING:
    from together_provider.cluster.resource import Cluster as Cluster
    from together_provider.cluster.resource import ClusterArgs as ClusterArgs
    from together_provider.volume.resource import SharedVolume as SharedVolume
    from together_provider.volume.resource import SharedVolumeArgs as SharedVolumeArgs

_LAZY = {name: kind for kind in _KINDS for name in kind.exports}
"""Each kind's exported class name -> its kind (the classes live in `<kind.package>.resource`)."""


def __getattr__(name: str) -> Any:
    """The resource classes on first use (PEP 562), so the import stays Pulumi-free."""
    kind = _LAZY.get(name)
    if kind is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(kind.module("resource"), name)


__all__ = sorted([*_errors.__all__, *_LAZY])
