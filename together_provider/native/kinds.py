"""The resource types the native plugin serves, one `Kind` each: what differs between them.

Everything else in the plugin (the provider adapter, the package schema, the Python resource
classes, import) is written once over a `Kind`: its token, its field table, its pure rules and,
loaded only on apply paths, its Pulumi-free lifecycle. Adding a resource type to the plugin is
one entry in `KINDS`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Protocol

from together_provider import rules, volume_rules
from together_provider.cluster_schema import CLUSTER, ClusterSpec
from together_provider.schema import Failure, Schema
from together_provider.volume_schema import VOLUME, VolumeSpec

if TYPE_CHECKING:
    from together_api.client import TogetherClient
    from together_provider.lifecycle import Applied, Observed, Say

PACKAGE: Final = "together"
CLUSTER_TOKEN: Final = f"{PACKAGE}:index:Cluster"
VOLUME_TOKEN: Final = f"{PACKAGE}:index:SharedVolume"


class Lifecycle(Protocol):
    """What `lifecycle.ClusterLifecycle` and `volume_lifecycle.VolumeLifecycle` both offer."""

    def create(
        self, inputs: Mapping[str, Any], *, timeout_seconds: float | None = None
    ) -> Applied: ...

    def update(
        self,
        id_: str,
        olds: Mapping[str, Any],
        news: Mapping[str, Any],
        *,
        timeout_seconds: float | None = None,
    ) -> Applied: ...

    def read(self, id_: str, props: Mapping[str, Any]) -> Observed | None: ...

    def delete(
        self, id_: str, props: Mapping[str, Any], *, timeout_seconds: float | None = None
    ) -> None: ...


LifecycleType = Callable[["TogetherClient", "Say"], Lifecycle]
Check = Callable[[Mapping[str, Any], Mapping[str, Any]], tuple[dict[str, Any], list[Failure]]]


@dataclass(frozen=True)
class Kind:
    """One resource type of the plugin.

    `lifecycle()` and `get_live()` import the API client only when called: a preview runs only
    check and diff (`check`, `plan`), which need neither httpx nor pydantic.
    """

    token: str
    schema: Schema[Any]
    description: str
    check: Check
    plan: Callable[[Mapping[str, Any], Mapping[str, Any]], rules.Plan]
    lifecycle: Callable[[], LifecycleType]
    get_live: Callable[[TogetherClient, str], Any]
    """The live API object `pulumi import` reads the inputs from (its `live=` attributes)."""

    @property
    def named_after_resource(self) -> str:
        """The input that defaults to the resource's name in the program."""
        return next(f.name for f in self.schema.inputs if f.names_resource)


def _cluster_lifecycle() -> LifecycleType:
    from together_provider.lifecycle import ClusterLifecycle

    return ClusterLifecycle


def _volume_lifecycle() -> LifecycleType:
    from together_provider.volume_lifecycle import VolumeLifecycle

    return VolumeLifecycle


def _doc(spec: type) -> str:
    return (spec.__doc__ or "").strip()


CLUSTER_KIND: Final = Kind(
    token=CLUSTER_TOKEN,
    schema=CLUSTER,
    description=_doc(ClusterSpec) + " `numGpus` counts standard GPUs; `numPreemptibleGpus` is "
    "the preemptible target, filled asynchronously.",
    check=rules.check_resource,
    plan=rules.plan,
    lifecycle=_cluster_lifecycle,
    get_live=lambda client, id_: client.get_cluster(id_),
)

VOLUME_KIND: Final = Kind(
    token=VOLUME_TOKEN,
    schema=VOLUME,
    description=_doc(VolumeSpec) + " Attach it to a cluster with the cluster's `volumeId` (and "
    "`volumeRegion`); `sizeTib` only grows.",
    check=volume_rules.check_resource,
    plan=volume_rules.plan,
    lifecycle=_volume_lifecycle,
    get_live=lambda client, id_: client.get_volume(id_),
)

KINDS: Final[Mapping[str, Kind]] = {kind.token: kind for kind in (CLUSTER_KIND, VOLUME_KIND)}
"""Every resource type the plugin serves, by token."""
