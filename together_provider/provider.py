"""The Cluster dynamic provider: a thin adapter from Pulumi's hooks to `lifecycle`.

Every decision (rules, duplicate guard, lost answers, adoption, waits) lives in
`together_provider.lifecycle`; what every dynamic provider shares (credentials, one API client
per call, progress, pickling by reference) lives in `together_provider.dynamic`. State files
name this class by module and name, so it stays here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from together_provider import rules
from together_provider.dynamic import CONFIG_API_KEY, CONFIG_BASE_URL, LifecycleProvider, say

if TYPE_CHECKING:
    from together_api.client import TogetherClient
    from together_provider.lifecycle import ClusterLifecycle
    from together_provider.rules import Plan
    from together_provider.schema import Failure

__all__ = ["CONFIG_API_KEY", "CONFIG_BASE_URL", "ClusterProvider"]


class ClusterProvider(LifecycleProvider):
    """Manages one Together GPU cluster per resource through `ClusterLifecycle`."""

    def check_resource(
        self, olds: Mapping[str, Any], news: Mapping[str, Any]
    ) -> tuple[dict[str, Any], list[Failure]]:
        return rules.check_resource(olds, news)

    def plan(self, olds: Mapping[str, Any], news: Mapping[str, Any]) -> Plan:
        return rules.plan(olds, news)

    def open_lifecycle(self, client: TogetherClient) -> ClusterLifecycle:
        from together_provider.lifecycle import ClusterLifecycle

        return ClusterLifecycle(client, say)
