"""Together AI GPU clusters as code: a Pulumi dynamic provider with a preemptible target.

The public API is re-exported here: each resource kind's classes (`Cluster`, `ClusterArgs`,
`SharedVolume`, `SharedVolumeArgs`, one pair per kind of `registry.KINDS`, generated into
`resources.py`) and every error of `together_api.errors`. Importing the package is cheap: the
resource classes (which need the Pulumi SDK) load on first use, so the field tables, the rules,
the lifecycles, the stack config and the PR preview can be imported without Pulumi's grpc and
dill. The layout is described in CONTRIBUTING.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from together_api import errors as _errors
from together_api.errors import *  # noqa: F403 (the error tree is re-exported whole, never copied)
from together_provider import registry as _registry

# Type checkers read the generated classes; at run time they load on first use (PEP 562), and
# hiding `__getattr__` from the checker keeps a misspelled name an error.
if TYPE_CHECKING:
    from together_provider.resources import *  # noqa: F403
else:
    __getattr__ = _registry.lazy_classes(__name__)

__all__ = sorted([*_errors.__all__, *_registry.EXPORTS])
