"""The SharedVolume resource kind: a Together shared volume that keeps checkpoints across reclaims.
Its `KIND` is the entry in `together_provider.registry` both hosts derive from."""

from __future__ import annotations

from typing import Final

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

KIND: Final = Kind(
    type_name=TYPE_NAME,
    package=__name__,
    schema=VOLUME,
    rulebook=RULEBOOK,
    lifecycle_class="VolumeLifecycle",
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
        PreviewExtension("VolumePreview"),
        # Known at preview, unlike outputs a provider does not preview: the id is Together's
        # volume id (so an attached cluster does not preview as replaced when the volume grows),
        # and the region is the input (Together reports none; a new region is a new volume).
        ProgramExtension(known_at_preview={"volume_id": ID, "region": "region"}),
        NativeExtension(
            "Attach it with a cluster's `volumeId` (and `volumeRegion`); `sizeTib` only grows."
        ),
    ),
)
