"""The SharedVolume kind: its entry in the registry (`together_provider.registry`)."""

from __future__ import annotations

from typing import Final

from together_provider.framework.kind import Kind, StackExport
from together_provider.volume.rules import RULEBOOK
from together_provider.volume.table import TYPE_NAME, VOLUME

KIND: Final = Kind(
    type_name=TYPE_NAME,
    package="together_provider.volume",
    schema=VOLUME,
    rulebook=RULEBOOK,
    lifecycle_class="VolumeLifecycle",
    config_key="volumes",
    docs_marker="volume-",
    native_notes="Attach it with a cluster's `volumeId` (and `volumeRegion`); `sizeTib` only "
    "grows.",
    stack_required=None,
    stack_defaults=frozenset({"region", "project_id"}),  # where, and whose, its clusters are
    attaches=(),
    stack_exports=(
        StackExport(
            "volume_{name}",
            lambda volume: {
                "volume_id": volume.volume_id,
                "size_tib": volume.size_tib,
                "status": volume.status,
            },
        ),
    ),
    preview_class="VolumePreview",
)
