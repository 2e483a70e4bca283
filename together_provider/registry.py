"""Every resource kind this project manages, once: adding a kind is one line here.

The docs generator, the lazy exports of `together_provider`, the dynamic and native hosts, stack
config, the PR preview and the tests loop over `KINDS`. Pure: importing it loads the field tables
and rules only (no Pulumi, httpx or pydantic).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from together_provider.cluster.kind import KIND as CLUSTER
from together_provider.framework.kind import Kind
from together_provider.volume.kind import KIND as VOLUME

__all__ = ["BY_TOKEN", "BY_TYPE", "CLUSTER", "KINDS", "VOLUME"]

KINDS: Final[tuple[Kind, ...]] = (CLUSTER, VOLUME)

BY_TOKEN: Final[Mapping[str, Kind]] = {kind.token: kind for kind in KINDS}
"""By native token (`together:index:Cluster`): how the native plugin finds a request's kind."""

BY_TYPE: Final[Mapping[str, Kind]] = {kind.dynamic_type: kind for kind in KINDS}
"""By dynamic type (`pulumi-python:dynamic/together:Cluster`): how a preview reads a step."""
