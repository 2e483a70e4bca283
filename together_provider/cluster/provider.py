"""The Cluster dynamic provider: Pulumi's dynamic-provider hooks over the Cluster kind.

Every decision (rules, duplicate guard, lost answers, adoption, waits) lives in
`cluster.rules` and `cluster.lifecycle`; what every dynamic provider shares (credentials, one API
client per call, progress, pickling by reference) lives in `framework.dynamic`.

State written before the move into `cluster/` names `together_provider.provider.ClusterProvider`;
that module re-exports this class, so old and new state load the same provider.
"""

from __future__ import annotations

from together_provider.cluster.kind import KIND
from together_provider.framework.dynamic import CONFIG_API_KEY, CONFIG_BASE_URL, LifecycleProvider

__all__ = ["CONFIG_API_KEY", "CONFIG_BASE_URL", "ClusterProvider"]


class ClusterProvider(LifecycleProvider):
    """Manages one Together GPU cluster per resource through `ClusterLifecycle`."""

    KIND = KIND
