"""What a change to a SharedVolume means: grow in place, replace, or reject. Pure: no I/O.

The same shape as `rules` for clusters: the field table's policies (`volume_schema.VOLUME`) say
what updates in place and what replaces, and `RULES` here what is rejected, so check, diff,
adoption and the README all read one answer. Unknown values are never rejected.

Replacement order: create first, then delete (`delete_before_replace=False`). A volume is held
by the clusters that name its id, and they are replaced with it (their `volume_id` changes), so
the old volume is deleted only after the clusters that used it are gone; two volumes of one
name can coexist in Together.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from together_provider.rules import Plan
from together_provider.schema import Draft, Failure, Policy, Unknown, is_unknown
from together_provider.volume_schema import VOLUME, VolumeSpec

VolumeDraft = Draft[VolumeSpec]

FIELD_POLICIES: Final[Mapping[str, Policy]] = VOLUME.policies


@dataclass(frozen=True)
class VolumeRule:
    """One rejection: the field it is reported on, when it applies and why (for the README)."""

    field: str
    when: str
    why: str
    check: Callable[[VolumeDraft, VolumeDraft | None], str | None]


def _differs(old: object, new: object) -> bool:
    return old is Unknown.VALUE or new is Unknown.VALUE or old != new


def _replacing_fields(old: VolumeDraft, new: VolumeDraft) -> tuple[str, ...]:
    """REPLACE fields that differ (a value unreadable in the old state never forces one)."""
    return tuple(
        name
        for name, policy in FIELD_POLICIES.items()
        if policy is Policy.REPLACE
        and getattr(old, name) is not Unknown.VALUE
        and _differs(getattr(old, name), getattr(new, name))
    )


def _shrink(new: VolumeDraft, old: VolumeDraft | None) -> str | None:
    if old is None or _replacing_fields(old, new):
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


def _prefixed(name: str, failures: list[Failure]) -> list[Failure]:
    return [Failure(f.field, f"volume {name!r}: {f.reason}") for f in failures]


def _failures(new: VolumeDraft, old: VolumeDraft | None) -> list[Failure]:
    return [
        Failure(rule.field, reason)
        for rule in RULES
        if (reason := rule.check(new, old)) is not None
    ]


def validate(name: str, new: Mapping[str, Any], old: Mapping[str, Any] | None) -> list[Failure]:
    """Field-local failures first, then the rules, each prefixed with the volume's name."""
    new_draft, failures = VOLUME.parse(new)
    old_draft = VOLUME.parse(_inputs_only(old))[0] if old else None
    return _prefixed(name, failures + _failures(new_draft, old_draft))


def check_inputs(
    name: str, new: Mapping[str, Any], old: Mapping[str, Any] | None
) -> tuple[dict[str, Any], list[Failure]]:
    """What the provider's check returns: normalised inputs (raw ones on failure), failures."""
    new_draft, failures = VOLUME.parse(new)
    old_draft = VOLUME.parse(_inputs_only(old))[0] if old else None
    failures += _failures(new_draft, old_draft)
    if failures:
        return {k: v for k, v in new.items() if not k.startswith("__")}, _prefixed(name, failures)
    return VOLUME.to_props(new_draft), []


def check_resource(
    olds: Mapping[str, Any], news: Mapping[str, Any]
) -> tuple[dict[str, Any], list[Failure]]:
    """A host's check: host keys (`__provider`) dropped, the volume named from `news`."""
    new = {k: v for k, v in news.items() if not k.startswith("__")}
    old = {k: v for k, v in olds.items() if not k.startswith("__")}
    raw_name = new.get("volume_name")
    name = raw_name if isinstance(raw_name, str) and not is_unknown(raw_name) else "(unnamed)"
    return check_inputs(name, new, old or None)


def _inputs_only(props: Mapping[str, Any] | None) -> dict[str, Any]:
    return {k: v for k, v in (props or {}).items() if k in FIELD_POLICIES}


def plan(old: Mapping[str, Any], new: Mapping[str, Any]) -> Plan:
    """Diff previous outputs against checked inputs: `update` is `{"size_tib": n}` or empty."""
    old_draft = VOLUME.parse(_inputs_only(old))[0]
    new_draft = VOLUME.parse(_inputs_only(new))[0]
    changed = tuple(
        name
        for name in FIELD_POLICIES
        if _differs(getattr(old_draft, name), getattr(new_draft, name))
    )
    replaces = _replacing_fields(old_draft, new_draft)
    update = {
        name: value
        for name in changed
        if FIELD_POLICIES[name] is Policy.IN_PLACE
        and isinstance(value := getattr(new_draft, name), int)
    }
    return Plan(changed=changed, replaces=replaces, update={} if replaces else update)


__all__ = [
    "FIELD_POLICIES",
    "RULES",
    "VolumeDraft",
    "VolumeRule",
    "check_inputs",
    "check_resource",
    "plan",
    "validate",
]
