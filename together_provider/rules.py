"""What a change to a Cluster means: update in place, replace, or reject. Pure: no I/O, no Pulumi.

Two tables drive everything, the way a Terraform schema's plan modifiers and validators do:
`FIELD_POLICIES` (per field: in place, replace, or provider-only) and `RULES` (what is rejected).
The provider's `check` calls `validate`, its `diff` calls `plan`, and the README table is rendered
from the same tables by `policy_table_markdown`, so docs and behaviour cannot drift apart.

Replacement order. Pulumi creates the replacement before deleting the old cluster unless the
provider asks otherwise. `plan` sets `delete_before_replace=True` when `cluster_name` stays the
same: a create-first replacement would collide with the provider's duplicate-name guard, and for a
while would bill two clusters' worth of scarce GPUs. When the name changes it is False: the new
cluster is created first and the old one deleted after, so there is no gap in capacity.

Unknowns (preview of values computed by other resources) are never rejected. `validate` skips a
rule whose inputs are unknown; `plan` treats an unknown REPLACE field as a replacement and an
unknown mutable field as an in-place change. A value missing or unreadable in the *old* outputs
(state written by an older provider) never forces a replacement: it is recorded in place.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final

from together_provider.spec import (
    NODE_GPUS,
    ClusterSpec,
    Failure,
    Unknown,
    normalise_partial,
    to_props,
)


class Policy(enum.Enum):
    """What changing a field does to a live cluster; the value is the README wording."""

    IN_PLACE = "updates in place"
    REPLACE = "replaces the cluster"
    LOCAL = "updates in place, no API call"


@dataclass(frozen=True)
class FieldPolicy:
    policy: Policy
    reason: str


def _replace(reason: str) -> FieldPolicy:
    return FieldPolicy(Policy.REPLACE, reason)


FIELD_POLICIES: Final[Mapping[str, FieldPolicy]] = MappingProxyType(
    {
        "cluster_name": _replace("not in Together's update request"),
        "region": _replace("GPUs are provisioned in one region; not in the update request"),
        "gpu_type": _replace("nodes are built for one GPU type; not in the update request"),
        "num_gpus": FieldPolicy(
            Policy.IN_PLACE, "the standard GPU count scales in place (PUT num_gpus)"
        ),
        "cuda_version": _replace("fixed when the node images are built; not in the update request"),
        "nvidia_driver_version": _replace(
            "fixed when the node images are built; not in the update request"
        ),
        "num_preemptible_gpus": FieldPolicy(
            Policy.IN_PLACE,
            "the preemptible target changes in place (PUT num_preemptible_gpus); Together fills "
            "it asynchronously",
        ),
        "cluster_type": _replace(
            "the API accepts it, but switching KUBERNETES/SLURM rebuilds the cluster"
        ),
        "billing_type": _replace("billing is fixed at create; not in the update request"),
        "duration_days": _replace("a reservation's length is fixed at create"),
        "project_id": _replace("a cluster belongs to one project; not in the update request"),
        "volume_id": _replace("the shared volume is attached at create; not in the update request"),
        "ready_timeout_seconds": FieldPolicy(
            Policy.LOCAL, "only bounds how long the provider waits for readiness"
        ),
        "adopt_cluster_id": FieldPolicy(
            Policy.LOCAL,
            "only read at create; later edits never re-adopt, create or delete a cluster",
        ),
    }
)


def _differs(old: object, new: object) -> bool:
    """An unknown on either side counts as different; 8 == 8.0 is not a change."""
    return old is Unknown.VALUE or new is Unknown.VALUE or old != new


def _replacing_fields(old: ClusterSpec, new: ClusterSpec) -> tuple[str, ...]:
    """REPLACE fields that differ, given evidence: unknown in new, or known in old and different."""
    return tuple(
        name
        for name, fp in FIELD_POLICIES.items()
        if fp.policy is Policy.REPLACE
        and getattr(old, name) is not Unknown.VALUE
        and _differs(getattr(old, name), getattr(new, name))
    )


# --- the rejection rules -----------------------------------------------------------------------

Check = Callable[[ClusterSpec, ClusterSpec | None], str | None]
"""A rule: (new spec, old spec or None on create) -> the reason it is rejected, or None."""


@dataclass(frozen=True)
class Rule:
    """One rejection: the field it is reported on, when it applies and why (both for the README)."""

    field: str
    when: str
    why: str
    check: Check


def _nearest_multiples(value: int) -> str:
    low = value // NODE_GPUS * NODE_GPUS
    return f"{low} or {low + NODE_GPUS}" if low else f"{NODE_GPUS}"


def _standard_node(new: ClusterSpec, _old: ClusterSpec | None) -> str | None:
    n = new.num_gpus
    if isinstance(n, Unknown) or n >= NODE_GPUS:
        return None
    alone = ""
    if isinstance(new.num_preemptible_gpus, int) and new.num_preemptible_gpus > 0:
        alone = "; a preemptible target alone cannot make a cluster"
    return (
        f"num_gpus={n} leaves no standard node{alone}; Together needs at least one 8-GPU "
        f"standard node (num_gpus >= {NODE_GPUS})"
    )


def _multiple_of_8(name: str) -> Check:
    def check(new: ClusterSpec, _old: ClusterSpec | None) -> str | None:
        n = getattr(new, name)
        if isinstance(n, Unknown) or n % NODE_GPUS == 0 or (name == "num_gpus" and n < NODE_GPUS):
            return None  # a num_gpus below 8 is reported once, by the standard-node rule
        return (
            f"{name}={n} is not a multiple of 8; Together nodes have 8 GPUs each "
            f"(use {_nearest_multiples(n)})"
        )

    return check


def _slurm_preemptible(new: ClusterSpec, _old: ClusterSpec | None) -> str | None:
    target = new.num_preemptible_gpus
    if new.cluster_type != "SLURM" or isinstance(target, Unknown) or target == 0:
        return None
    return (
        f"num_preemptible_gpus={target} on a SLURM cluster; Slurm clusters cannot use "
        "preemptible capacity yet (set num_preemptible_gpus=0 or cluster_type='KUBERNETES')"
    )


def _preemptible_project(new: ClusterSpec, _old: ClusterSpec | None) -> str | None:
    target = new.num_preemptible_gpus
    if new.project_id is not None or isinstance(target, Unknown) or target == 0:
        return None
    return (
        f"project_id is not set but num_preemptible_gpus={target}; Together requires a project "
        "for a preemptible target (set project_id, or num_preemptible_gpus=0)"
    )


def _reservation_length(new: ClusterSpec, _old: ClusterSpec | None) -> str | None:
    billing, days = new.billing_type, new.duration_days
    if isinstance(billing, Unknown) or isinstance(days, Unknown):
        return None
    if billing == "RESERVED" and days is None:
        return (
            "duration_days is not set but billing_type='RESERVED'; a reservation needs a length "
            "(set duration_days between 1 and 90)"
        )
    if billing != "RESERVED" and days is not None:
        return (
            f"duration_days={days} with billing_type={billing!r}; only RESERVED clusters "
            "have a length (remove duration_days or set billing_type='RESERVED')"
        )
    return None


def _class_conversion(new: ClusterSpec, old: ClusterSpec | None) -> str | None:
    """Opposite moves of the two counts in one update ask Together to convert nodes in place."""
    if old is None or _replacing_fields(old, new):
        return None  # a create, or a new cluster altogether: nothing is converted
    std0, std1 = old.num_gpus, new.num_gpus
    pre0, pre1 = old.num_preemptible_gpus, new.num_preemptible_gpus
    if not (isinstance(std0, int) and isinstance(std1, int)):
        return None
    if not (isinstance(pre0, int) and isinstance(pre1, int)):
        return None
    moves = f"num_gpus {std0} -> {std1} with num_preemptible_gpus {pre0} -> {pre1}"
    cannot = (
        "Together would accept it (adding nodes of one class while draining the other), but this "
        "provider refuses it as a safety policy: capacity drops while the new nodes provision"
    )
    replace = "or replace the cluster (e.g. change cluster_name)"
    if std1 < std0 and pre1 > pre0:
        return (
            f"{moves} converts standard nodes to preemptible in one update; {cannot}. Raise "
            f"num_preemptible_gpus to {pre1} first, then lower num_gpus to {std1} in a later "
            f"update once work has drained, {replace}"
        )
    if std1 > std0 and pre1 < pre0:
        return (
            f"{moves} converts preemptible nodes to standard in one update; {cannot}. Raise "
            f"num_gpus to {std1} first, then lower num_preemptible_gpus to {pre1} in a later "
            f"update once work has moved to the standard nodes, {replace}"
        )
    return None


RULES: Final[tuple[Rule, ...]] = (
    Rule(
        "num_gpus",
        "`num_gpus` < 8",
        "every cluster needs at least one 8-GPU standard node",
        _standard_node,
    ),
    Rule(
        "num_gpus",
        "`num_gpus` not a multiple of 8",
        "nodes have 8 GPUs each",
        _multiple_of_8("num_gpus"),
    ),
    Rule(
        "num_preemptible_gpus",
        "`num_preemptible_gpus` not a multiple of 8",
        "nodes have 8 GPUs each",
        _multiple_of_8("num_preemptible_gpus"),
    ),
    Rule(
        "num_gpus",
        "`num_gpus` down and `num_preemptible_gpus` up in one update, or the reverse",
        "our safety policy, not an API limit: capacity drops while the new nodes provision; "
        "change one count per update",
        _class_conversion,
    ),
    Rule(
        "num_preemptible_gpus",
        "`num_preemptible_gpus` > 0 with `cluster_type = SLURM`",
        "Slurm clusters cannot use preemptible capacity yet",
        _slurm_preemptible,
    ),
    Rule(
        "project_id",
        "`project_id` unset while `num_preemptible_gpus` > 0",
        "Together requires a project for a preemptible target",
        _preemptible_project,
    ),
    Rule(
        "duration_days",
        "`duration_days` unset with `RESERVED` billing, or set without it",
        "only a reservation has a length (1..90 days)",
        _reservation_length,
    ),
)


# --- check and diff ------------------------------------------------------------------------------


def validate(name: str, new: Mapping[str, Any], old: Mapping[str, Any] | None) -> list[Failure]:
    """The check-time rules. `old` is the previous inputs: None or {} on create and replacement.

    Field-local failures (types, unknown keys, enums, ranges) come first; the cross-field rules
    then run on every field that parsed, so one check reports as much as it can.
    """
    new_spec, failures = normalise_partial(new)
    old_spec = normalise_partial(old)[0] if old else None
    for rule in RULES:
        reason = rule.check(new_spec, old_spec)
        if reason is not None:
            failures.append(Failure(rule.field, reason))
    return [Failure(f.field, f"cluster {name!r}: {f.reason}") for f in failures]


def check_inputs(
    name: str, new: Mapping[str, Any], old: Mapping[str, Any] | None
) -> tuple[dict[str, Any], list[Failure]]:
    """What the provider's check returns: normalised inputs (raw ones on failure), failures."""
    failures = validate(name, new, old)
    if failures:
        return {k: v for k, v in new.items() if not k.startswith("__")}, failures
    return to_props(normalise_partial(new)[0]), []


def _inputs_only(props: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in props.items() if k in FIELD_POLICIES}


@dataclass(frozen=True)
class Plan:
    """The meaning of a diff: which fields changed, which force a replacement, what to PUT.

    `update` holds only changed, known, in-place API fields, and is empty for a replacement (the
    new cluster is created with every field; nothing is PUT to the old one).
    """

    changed: tuple[str, ...] = ()
    replaces: tuple[str, ...] = ()
    update: dict[str, int] = field(default_factory=dict)
    delete_before_replace: bool = False

    @property
    def has_changes(self) -> bool:
        return bool(self.changed)


def plan(old: Mapping[str, Any], new: Mapping[str, Any]) -> Plan:
    """Diff previous outputs against checked inputs. Output-only keys in `old` are ignored, so
    `allocated_preemptible_gpus` below the target is never a change."""
    old_spec = normalise_partial(_inputs_only(old))[0]
    new_spec = normalise_partial(_inputs_only(new))[0]
    changed = tuple(
        name
        for name in FIELD_POLICIES
        if _differs(getattr(old_spec, name), getattr(new_spec, name))
    )
    replaces = _replacing_fields(old_spec, new_spec)
    update = {
        name: value
        for name in changed
        if FIELD_POLICIES[name].policy is Policy.IN_PLACE
        and isinstance(value := getattr(new_spec, name), int)
    }
    # An unknown new name is only seen in preview; `up` diffs again with the real value.
    same_name = not _differs(old_spec.cluster_name, new_spec.cluster_name)
    unknown_name = new_spec.cluster_name is Unknown.VALUE
    return Plan(
        changed=changed,
        replaces=replaces,
        update={} if replaces else update,
        delete_before_replace=bool(replaces) and (same_name or unknown_name),
    )


# --- docs ----------------------------------------------------------------------------------------


def policy_table_markdown() -> str:
    """The README's table of what updates in place, replaces or is rejected, from the tables."""
    rows = ["| Field | What happens | Why |", "|---|---|---|"]
    rows += [f"| `{n}` | {fp.policy.value} | {fp.reason} |" for n, fp in FIELD_POLICIES.items()]
    rows += [f"| {r.when} | rejected at check | {r.why} |" for r in RULES]
    rows.append(
        "| any field of the wrong type, an unknown key or enum value, a negative count, a value "
        "out of range | rejected at check | reported with the valid values, never coerced |"
    )
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    print(policy_table_markdown(), end="")


__all__ = [
    "FIELD_POLICIES",
    "RULES",
    "FieldPolicy",
    "Plan",
    "Policy",
    "Rule",
    "check_inputs",
    "plan",
    "policy_table_markdown",
    "validate",
]
