"""The SharedVolume resource kind: a Together shared volume that keeps checkpoints across reclaims.
Its `KIND` is the entry in `together_provider.registry` both hosts derive from."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from together_provider.extensions import (
    ID,
    ExportsExtension,
    NativeExtension,
    PreviewExtension,
    ProgramExtension,
    StackConfigExtension,
    StackExport,
)
from together_provider.framework.kind import Kind
from together_provider.volume.rules import RULEBOOK
from together_provider.volume.table import TYPE_NAME, VOLUME

if TYPE_CHECKING:
    from together_provider.preview_parts.kinds import KindPreview
    from together_provider.volume.lifecycle import VolumeLifecycle


def _lifecycle() -> type[VolumeLifecycle]:
    """Imported on first use: it loads the API client (httpx, pydantic), which a preview never
    needs."""
    from together_provider.volume.lifecycle import VolumeLifecycle

    return VolumeLifecycle


def _preview(kind: Kind) -> KindPreview:
    """Its part of the PR comment, imported when a comment is rendered."""
    from together_provider.volume.preview import VolumePreview

    return VolumePreview(kind)


KIND: Final = Kind(
    type_name=TYPE_NAME,
    package=__name__,
    schema=VOLUME,
    rulebook=RULEBOOK,
    lifecycle=_lifecycle,
    docs_marker="volume-",
    doc="A Together shared volume of `size_tib` whole TiB in `region`, where preemptible nodes "
    "write checkpoints that outlive them; attach it with `ClusterArgs(volume_id=volume.volume_id, "
    "volume_region=volume.region)`. Growing `size_tib` is one in-place PUT; a shrink is rejected "
    "at preview; changing the name, region, project or lifecycle independence replaces it. "
    "Deleting it is refused while a live cluster uses it.",
    extensions=(
        StackConfigExtension(
            key="volumes",
            required=None,
            defaults=frozenset({"region", "project_id"}),  # where, and whose, its clusters are
        ),
        ExportsExtension(
            (
                StackExport(
                    "volume_{name}",
                    lambda volume: {
                        "volume_id": volume.volume_id,
                        "size_tib": volume.size_tib,
                        "status": volume.status,
                    },
                ),
            )
        ),
        PreviewExtension(_preview),
        # Known at preview, unlike outputs a provider does not preview: the id is Together's
        # volume id (so an attached cluster does not preview as replaced when the volume grows),
        # and the region is the input (Together reports none; a new region is a new volume).
        ProgramExtension(known_at_preview={"volume_id": ID, "region": "region"}),
        NativeExtension(
            "Attach it with a cluster's `volumeId` (and `volumeRegion`); `sizeTib` only grows."
        ),
    ),
)
