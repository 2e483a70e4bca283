"""The SharedVolume resource's field table: the one place a shared-volume field is declared, so the
specs, policies, outputs and docs derive from `VOLUME` and cannot disagree."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from together_provider.framework import validators
from together_provider.framework.fields import adopt_id_field, ready_timeout_field
from together_provider.framework.schema import Policy, Schema, input_field, output_field

if TYPE_CHECKING:  # the live objects' types only; importing them would load pydantic in a preview
    from together_api.wire import Cluster, SharedVolume

REPLACE, IN_PLACE, LOCAL = Policy.REPLACE, Policy.IN_PLACE, Policy.LOCAL
NOT_RESIZABLE: Final = "not in Together's resize request"

TYPE_MODULE: Final = "together"
TYPE_NAME: Final = "SharedVolume"
VOLUME_TYPE: Final = f"pulumi-python:dynamic/{TYPE_MODULE}:{TYPE_NAME}"
"""The resource type token in the state and in `pulumi preview --json`."""


def size_tib(name: str, raw: object) -> int:
    """Whole TiB, at least 1 (Together's minimum volume)."""
    value = validators.whole(name, raw, "a volume size in TiB", 1)
    if value < 1:
        raise validators.Invalid(
            f"{name}={value} is below Together's minimum; a volume is at least 1 TiB ({name} >= 1)"
        )
    return value


@dataclass(frozen=True)
class VolumeSpec:
    """The resolved inputs of one shared volume: every value known, defaults applied."""

    # What Together's volume API allows decides the policies: only `size_tib` is in the resize
    # request (and it only grows); the name, region, project and lifecycle independence are fixed
    # at create, as in Together's Terraform resource `together_beta_cluster_storage`.

    volume_name: str = input_field(
        REPLACE,
        f"{NOT_RESIZABLE}; the volume's Kubernetes PersistentVolume carries this name",
        "The volume's name in Together (and of its PersistentVolume on the cluster); defaults "
        "to the resource name (the config key).",
        example="'checkpoints'",
        live="volume_name",
        names_resource=True,
        per_resource=True,
    )
    region: str = input_field(
        REPLACE,
        f"a volume lives in one region's datacenter; {NOT_RESIZABLE}",
        "Together region; a cluster can only attach a volume of its own region.",
        example="'us-central-8'",
    )
    size_tib: int = input_field(
        IN_PLACE,
        "grows in place (one PUT of size_tib); a shrink is rejected at check, since Together "
        "only shrinks a volume through support",
        "Size in whole TiB, at least 1.",
        example="4",
        validator=size_tib,
        live="size_tib",
    )
    project_id: str | None = input_field(
        REPLACE,
        f"a volume belongs to one project; {NOT_RESIZABLE}",
        "Together project.",
        default=None,
    )
    is_lifecycle_independent: bool = input_field(
        REPLACE,
        f"fixed at create; {NOT_RESIZABLE}",
        "Keep the volume when the last cluster using it is deleted. The default (true) lets the "
        "stack, not a cluster's deletion, decide when the checkpoints go; with false Together "
        "deletes it with its cluster, so replacing that cluster loses them.",
        default=True,
    )
    instance_cluster_id: str | None = input_field(
        REPLACE,
        f"where a volume is placed is decided at create; {NOT_RESIZABLE}",
        "A cluster whose infrastructure the volume is placed on (its `cluster_id`).",
        default=None,
    )
    ready_timeout_seconds: float = ready_timeout_field(
        "only bounds how long the provider waits for the volume",
        "How long create waits for the volume to be available (and delete for it to be gone).",
    )
    adopt_volume_id: str | None = adopt_id_field("volume")


@dataclass(frozen=True)
class LiveVolume:
    """A volume as Together reports it, with the clusters whose `volumes` list it. Together's
    volume object carries only id, name, size and status (no region, no project, no clusters), so
    region and project are kept from the inputs and the clusters are read from their own lists."""

    volume: SharedVolume
    clusters: Sequence[Cluster] = ()

    @property
    def volume_id(self) -> str:
        return self.volume.volume_id

    @property
    def volume_name(self) -> str:
        return self.volume.volume_name

    @property
    def size_tib(self) -> int:
        return self.volume.size_tib

    @property
    def status(self) -> str:
        return self.volume.status

    @property
    def cluster_ids(self) -> list[str]:
        return [c.cluster_id for c in self.clusters]

    @property
    def live_clusters(self) -> list[Cluster]:
        """The clusters that hold the volume now (not on their way out)."""
        return [c for c in self.clusters if not c.is_deleting]


@dataclass(frozen=True)
class VolumeOutputs:
    """What the provider computes from the live volume; every input is echoed beside these."""

    volume_id: str = output_field("Together's id of the volume; pass it to `Cluster(volume_id=)`.")
    status: str = output_field("Together's status, e.g. `available` or `bound`.")
    cluster_ids: list[str] = output_field(
        "The clusters that use the volume (from the clusters' own `volumes` lists)."
    )


VOLUME: Final = Schema("volume", VolumeSpec, VolumeOutputs)
"""The SharedVolume schema every volume module derives its view from."""
