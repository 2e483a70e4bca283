"""The resource types the native plugin serves, one `Kind` each: what differs between them.

Everything else in the plugin (the provider adapter, the package schema, the Python resource
classes, import) is written once over a `Kind`: its token, its field table, its pure rules and,
loaded only on apply paths, its Pulumi-free lifecycle. Adding a resource type to the plugin is
one entry in `KINDS`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Protocol

from together_provider import rules, volume_rules
from together_provider.cluster_schema import CLUSTER
from together_provider.rules import Plan
from together_provider.schema import Failure, Schema
from together_provider.volume_schema import VOLUME

if TYPE_CHECKING:
    from together_api.client import TogetherClient
    from together_provider.lifecycle import Applied, Observed, Say

PACKAGE: Final = "together"
CLUSTER_TOKEN: Final = f"{PACKAGE}:index:Cluster"
VOLUME_TOKEN: Final = f"{PACKAGE}:index:SharedVolume"

Props = Mapping[str, Any]


class Lifecycle(Protocol):
    """What `lifecycle.ClusterLifecycle` and `volume_lifecycle.VolumeLifecycle` both offer."""

    def create(self, inputs: Props, *, timeout_seconds: float | None = None) -> Applied: ...
    def update(
        self, id_: str, olds: Props, news: Props, *, timeout_seconds: float | None = None
    ) -> Applied: ...
    def read(self, id_: str, props: Props) -> Observed | None: ...
    def delete(self, id_: str, props: Props, *, timeout_seconds: float | None = None) -> None: ...


LifecycleType = Callable[["TogetherClient", "Say"], Lifecycle]


class Rules(Protocol):
    """What `rules` and `volume_rules` both offer: a host's check, and the plan of a change."""

    def check_resource(self, olds: Props, news: Props) -> tuple[dict[str, Any], list[Failure]]: ...
    def plan(self, old: Props, new: Props) -> Plan: ...


@dataclass(frozen=True)
class Kind:
    """One resource type of the plugin: `rules` decide check and diff (pure, so a preview loads
    neither httpx nor pydantic); `lifecycle` (`module:Class`) and the client's `getter` (what
    `pulumi import` reads the `live=` attributes from) are loaded only on apply paths."""

    token: str
    schema: Schema[Any]
    rules: Rules
    lifecycle_path: str
    getter: str
    notes: str
    """Said after the table's docstring in the package schema's description."""

    @property
    def description(self) -> str:
        return (self.schema.spec_type.__doc__ or "").strip() + " " + self.notes

    @property
    def named_after_resource(self) -> str:
        """The input that defaults to the resource's name in the program."""
        return next(f.name for f in self.schema.inputs if f.names_resource)

    def lifecycle(self) -> LifecycleType:
        module, name = self.lifecycle_path.split(":")
        lifecycle_type: LifecycleType = getattr(importlib.import_module(module), name)
        return lifecycle_type

    def get_live(self, client: TogetherClient, id_: str) -> Any:
        return getattr(client, self.getter)(id_)


CLUSTER_KIND: Final = Kind(
    CLUSTER_TOKEN, CLUSTER, rules, "together_provider.lifecycle:ClusterLifecycle", "get_cluster",
    "`numGpus` counts standard GPUs; `numPreemptibleGpus` is the preemptible target, filled "
    "asynchronously.",
)  # fmt: skip
VOLUME_KIND: Final = Kind(
    VOLUME_TOKEN, VOLUME, volume_rules, "together_provider.volume_lifecycle:VolumeLifecycle",
    "get_volume", "Attach it with a cluster's `volumeId` (and `volumeRegion`); `sizeTib` only "
    "grows.",
)  # fmt: skip

KINDS: Final[Mapping[str, Kind]] = {kind.token: kind for kind in (CLUSTER_KIND, VOLUME_KIND)}
"""Every resource type the plugin serves, by token."""
