"""What a change to a SharedVolume means (grow in place, replace, or reject), answered once so
check, diff, adoption and the docs all read one answer. Pure: no I/O."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from together_provider.framework.rulebook import Plan, Rule, Rulebook, replacing_fields
from together_provider.framework.schema import Draft, Policy
from together_provider.volume.table import VOLUME, VolumeSpec

VolumeDraft = Draft[VolumeSpec]

FIELD_POLICIES: Final[Mapping[str, Policy]] = VOLUME.policies

VolumeRule = Rule[VolumeSpec]
"""One rejection: the field it is reported on, when it applies and why (for the reference page)."""


def _shrink(new: VolumeDraft, old: VolumeDraft | None) -> str | None:
    if old is None or replacing_fields(VOLUME, old, new):
        return None  # a create, or a new volume altogether: nothing shrinks
    before, after = old.size_tib, new.size_tib
    if not (isinstance(before, int) and isinstance(after, int)) or after >= before:
        return None
    return (
        f"size_tib {before} -> {after} would shrink the volume; Together volumes only grow "
        f"(shrinking needs a Together support request), so keep size_tib >= {before}, or "
        "replace the volume (e.g. change volume_name) to start a smaller, empty one"
    )


RULES: Final[tuple[VolumeRule, ...]] = (
    VolumeRule(
        "size_tib",
        "`size_tib` lowered on a live volume",
        "Together volumes only grow; shrinking needs a support request",
        _shrink,
    ),
)


RULEBOOK: Final[Rulebook[VolumeSpec]] = Rulebook(VOLUME, RULES, name_field="volume_name")
"""Create-first replacements (the default, `delete_before_replace=False`): a volume is held by
the clusters that name its id, and they are replaced with it (their `volume_id` changes), so the
old volume is deleted only after the clusters that used it are gone; two volumes of one name can
coexist in Together. Unknown values are never rejected (`Rulebook`)."""

__all__ = [
    "FIELD_POLICIES",
    "RULEBOOK",
    "RULES",
    "Plan",
    "VolumeDraft",
    "VolumeRule",
]
