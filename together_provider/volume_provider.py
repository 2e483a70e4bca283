"""The SharedVolume dynamic provider: a thin adapter from Pulumi's hooks to `volume_lifecycle`.

Every decision lives in `together_provider.volume_lifecycle`; what every dynamic provider shares
(credentials, one API client per call, progress, pickling by reference) lives in
`together_provider.dynamic`. State files name this class by module and name, so it stays here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from together_provider import volume_rules
from together_provider.dynamic import LifecycleProvider, say

if TYPE_CHECKING:
    from together_api.client import TogetherClient
    from together_provider.rules import Plan
    from together_provider.schema import Failure
    from together_provider.volume_lifecycle import VolumeLifecycle

__all__ = ["VolumeProvider"]


class VolumeProvider(LifecycleProvider):
    """Manages one Together shared volume per resource through `VolumeLifecycle`."""

    def check_resource(
        self, olds: Mapping[str, Any], news: Mapping[str, Any]
    ) -> tuple[dict[str, Any], list[Failure]]:
        return volume_rules.check_resource(olds, news)

    def plan(self, olds: Mapping[str, Any], news: Mapping[str, Any]) -> Plan:
        return volume_rules.plan(olds, news)

    def open_lifecycle(self, client: TogetherClient) -> VolumeLifecycle:
        from together_provider.volume_lifecycle import VolumeLifecycle

        return VolumeLifecycle(client, say)
