"""What a change to a Cluster means: update in place, replace, or reject, in one `RULEBOOK` over
the field table's policies and `RULES` (like a Terraform schema's plan modifiers and validators),
so check, diff, update, adoption, the PR preview and docs/reference.md answer alike. Pure."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import Any, Final

from together_provider.cluster.table import CLUSTER, ClusterSpec
from together_provider.framework.rulebook import (
    Plan,
    Rule,
    Rulebook,
    kept_when_unset,
    replacing_fields,
    wanted,
)
from together_provider.framework.schema import Draft, Policy, Unknown, is_unknown
from together_provider.framework.validators import NODE_GPUS, instant

ClusterDraft = Draft[ClusterSpec]
"""The possibly-unknown Cluster spec the rules read."""

FIELD_POLICIES: Final[Mapping[str, Policy]] = CLUSTER.policies
"""Per input field: in place, replace or provider-only (from the field table)."""


# --- the rejection rules -----------------------------------------------------------------------

Check = Callable[[ClusterDraft, ClusterDraft | None], str | None]
"""A rule: (new spec, old spec or None on create) -> the reason it is rejected, or None."""


def _nearest_multiples(value: int) -> str:
    low = value // NODE_GPUS * NODE_GPUS
    return f"{low} or {low + NODE_GPUS}" if low else f"{NODE_GPUS}"


def _standard_node(new: ClusterDraft, _old: ClusterDraft | None) -> str | None:
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


def _not_multiple_of_8(name: str, new: ClusterDraft, _old: ClusterDraft | None) -> str | None:
    """Field `name` is not whole 8-GPU nodes (bound to one field in `RULES` with `partial`: a
    plain function called on each check, not a closure made once at import, so a test of the
    rule exercises this code)."""
    n = getattr(new, name)
    if n is None or isinstance(n, Unknown) or n % NODE_GPUS == 0:
        return None
    if name == "num_gpus" and n < NODE_GPUS:
        return None  # a num_gpus below 8 is reported once, by the standard-node rule
    return (
        f"{name}={n} is not a multiple of 8; Together nodes have 8 GPUs each "
        f"(use {_nearest_multiples(n)})"
    )


def _preemptible_ask(new: ClusterDraft) -> tuple[str, int] | None:
    """The largest preemptible target the spec allows, as `field=value`, or None for none."""
    for name in ("max_preemptible_gpus", "num_preemptible_gpus"):
        value = getattr(new, name)
        if isinstance(value, int) and value > 0:
            return name, value
    return None


def _slurm_preemptible(new: ClusterDraft, _old: ClusterDraft | None) -> str | None:
    ask = _preemptible_ask(new)
    if new.cluster_type != "SLURM" or ask is None:
        return None
    return (
        f"{ask[0]}={ask[1]} on a SLURM cluster; Slurm clusters cannot use preemptible capacity "
        f"yet (set {ask[0]}=0 or cluster_type='KUBERNETES')"
    )


def _preemptible_project(new: ClusterDraft, _old: ClusterDraft | None) -> str | None:
    ask = _preemptible_ask(new)
    if new.project_id is not None or ask is None:
        return None
    return (
        f"project_id is not set but {ask[0]}={ask[1]}; Together requires a project for a "
        f"preemptible target (set project_id, or {ask[0]}=0)"
    )


def _ceiling_below_floor(
    floor: str, ceiling: str, unset: str, new: ClusterDraft, _old: ClusterDraft | None
) -> str | None:
    """A declared range whose ceiling is below its floor (bound to one range in `RULES`)."""
    low, high = getattr(new, floor), getattr(new, ceiling)
    if not isinstance(low, int) or not isinstance(high, int) or high >= low:
        return None
    if high % NODE_GPUS:
        return None  # reported once, by the multiple-of-8 rule
    return (
        f"{ceiling}={high} is below {floor}={low}, the floor of the range; set {ceiling} "
        f"to at least {low} (a multiple of 8), or {unset}"
    )


def _auto_scale_pair(new: ClusterDraft, _old: ClusterDraft | None) -> str | None:
    on, ceiling = new.auto_scale, new.auto_scale_max_gpus
    if Unknown.VALUE in (on, ceiling):
        return None
    if on is True and ceiling is None:
        return (
            "auto_scale is true but auto_scale_max_gpus is not set; Together scales between "
            "num_gpus and auto_scale_max_gpus (set auto_scale_max_gpus, a multiple of 8 >= "
            "num_gpus)"
        )
    if on is not True and ceiling is not None:
        return (
            f"auto_scale_max_gpus={ceiling} without auto_scale; the ceiling only means something "
            "to Together's autoscaler (set auto_scale=true, or remove auto_scale_max_gpus)"
        )
    return None


def _reservation_length(new: ClusterDraft, _old: ClusterDraft | None) -> str | None:
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


def _class_conversion(new: ClusterDraft, old: ClusterDraft | None) -> str | None:
    """Opposite moves of the two counts in one update ask Together to convert nodes in place."""
    if old is None or replacing_fields(CLUSTER, old, new):
        return None  # a create, or a new cluster altogether: nothing is converted
    # What would be PUT: inside a declared range the live count stays (`wanted`).
    std0, std1 = old.num_gpus, wanted(CLUSTER, old, new, "num_gpus")
    pre0, pre1 = old.num_preemptible_gpus, wanted(CLUSTER, old, new, "num_preemptible_gpus")
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


def _volume_region(new: ClusterDraft, _old: ClusterDraft | None) -> str | None:
    """A volume is only reachable from its own region's datacenter."""
    region, where = new.region, new.volume_region
    if new.volume_id is None or where is None or Unknown.VALUE in (region, where):
        return None
    if where == region:
        return None
    volume = (
        "the volume being created" if new.volume_id is Unknown.VALUE else f"volume {new.volume_id}"
    )
    return (
        f"volume_region={where!r} differs from region={region!r}; Together attaches only a "
        f"volume of the cluster's own region ('Shared volume does not exist in the datacenter'), "
        f"so {volume} cannot be attached (put the volume in {region!r}, or the cluster in "
        f"{where!r})"
    )


def _driver_twice(new: ClusterDraft, _old: ClusterDraft | None) -> str | None:
    """The driver is named one way: by catalogue id, or by the CUDA + driver pair."""
    by_id, cuda, driver = new.nvidia_version_id, new.cuda_version, new.nvidia_driver_version
    if by_id is None or Unknown.VALUE in (by_id, cuda, driver):
        return None
    pair = {"cuda_version": cuda, "nvidia_driver_version": driver}
    given = ", ".join(f"{k}={v!r}" for k, v in pair.items() if v is not None)
    if not given:
        return None
    return (
        f"nvidia_version_id={by_id!r} with {given}; name the driver one way: either "
        "nvidia_version_id, or cuda_version with nvidia_driver_version (remove the other)"
    )


def _driver_half(field: str, new: ClusterDraft, _old: ClusterDraft | None) -> str | None:
    """Without a catalogue id, each half of the CUDA + driver pair is needed; reported on the half
    that is missing, which is the field a user who forgot it looks for."""
    by_id, value = new.nvidia_version_id, getattr(new, field)
    if by_id is not None or value is not None or Unknown.VALUE in (by_id, value):
        return None
    return (
        f"{field} not set and no nvidia_version_id; Together needs the driver, by "
        "nvidia_version_id (an id from `tg beta clusters list-regions`) or by cuda_version "
        "with nvidia_driver_version (e.g. cuda_version='12.8', nvidia_driver_version='570')"
    )


def _capacity_pool(new: ClusterDraft, _old: ClusterDraft | None) -> str | None:
    pool, gpus, n = new.capacity_pool_id, new.num_capacity_pool_gpus, new.num_gpus
    if gpus is None or Unknown.VALUE in (pool, gpus):
        return None
    if pool is None and gpus > 0:
        return (
            f"num_capacity_pool_gpus={gpus} without capacity_pool_id; GPUs are drawn from a pool "
            "only by a cluster created on one (set capacity_pool_id, or remove "
            "num_capacity_pool_gpus)"
        )
    if isinstance(n, int) and gpus > n and gpus % NODE_GPUS == 0:
        return (
            f"num_capacity_pool_gpus={gpus} is above num_gpus={n}; Together draws at most "
            f"num_gpus from the pool (set num_capacity_pool_gpus to {n} or less, a multiple of 8)"
        )
    return None


def _reserved_gpus(new: ClusterDraft, _old: ClusterDraft | None) -> str | None:
    reserved, billing = new.num_reserved_gpus, new.billing_type
    if reserved is None or Unknown.VALUE in (reserved, billing) or billing == "RESERVED":
        return None
    return (
        f"num_reserved_gpus={reserved} with billing_type={billing!r}; only a RESERVED cluster "
        "has prepaid reserved GPUs (remove num_reserved_gpus, or set billing_type='RESERVED')"
    )


_WINDOWED: Final = ("RESERVED", "SCHEDULED_CAPACITY")


def _reservation_window(new: ClusterDraft, _old: ClusterDraft | None) -> str | None:
    billing, start, end = new.billing_type, new.reservation_start_time, new.reservation_end_time
    if Unknown.VALUE in (billing, start, end):
        return None
    if billing == "SCHEDULED_CAPACITY" and None in (start, end):
        return (
            "billing_type='SCHEDULED_CAPACITY' needs reservation_start_time and "
            "reservation_end_time; Together reserves capacity for a window (set both, e.g. "
            "'2027-01-01T00:00:00Z' and '2027-01-08T00:00:00Z')"
        )
    if end is not None and billing not in _WINDOWED:
        return (
            f"reservation_end_time={end!r} with billing_type={billing!r}; only a prepaid "
            "cluster (RESERVED or SCHEDULED_CAPACITY) has an end (remove reservation_end_time)"
        )
    if start is not None and end is not None and instant(end) <= instant(start):
        return (
            f"reservation_end_time={end!r} is not after reservation_start_time={start!r}; a "
            "reservation ends after it starts (set reservation_end_time later than "
            f"{start!r})"
        )
    return None


def _shortened(new: ClusterDraft, old: ClusterDraft | None) -> str | None:
    """Together extends a running reservation; it never gives back days already bought."""
    if old is None:
        return None
    was, end = old.reservation_end_time, new.reservation_end_time
    if not isinstance(was, str) or not isinstance(end, str) or instant(end) >= instant(was):
        return None
    if replacing_fields(CLUSTER, old, new):
        return None
    return (
        f"reservation_end_time {was} -> {end} shortens the running reservation; Together only "
        f"extends one (set reservation_end_time to {was} or later, or replace the cluster, e.g. "
        "with a new cluster_name)"
    )


def _add_on_set(new: ClusterDraft, old: ClusterDraft | None) -> str | None:
    """The update request changes an existing add-on's config, by name; it adds or removes none,
    so a cluster created without add-ons cannot gain one either."""
    if old is None:
        return None
    was, now = old.add_ons, new.add_ons
    if now is None or Unknown.VALUE in (was, now):
        return None  # unsetting is the kept-when-unset rule's
    before = sorted((a["name"], a["add_on_type"]) for a in was or [])
    after = sorted((a["name"], a["add_on_type"]) for a in now)
    if before == after or replacing_fields(CLUSTER, old, new):
        return None
    return (
        f"add_ons {before} -> {after} adds, removes or retypes an add-on; Together's update "
        "request only changes an existing add-on's config (keep the same names and types, or "
        "replace the cluster, e.g. with a new cluster_name)"
    )


RULES: Final[tuple[Rule[ClusterSpec], ...]] = (
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
        partial(_not_multiple_of_8, "num_gpus"),
    ),
    Rule(
        "num_preemptible_gpus",
        "`num_preemptible_gpus` not a multiple of 8",
        "nodes have 8 GPUs each",
        partial(_not_multiple_of_8, "num_preemptible_gpus"),
    ),
    Rule(
        "max_preemptible_gpus",
        "`max_preemptible_gpus` not a multiple of 8",
        "the live target moves in whole 8-GPU nodes",
        partial(_not_multiple_of_8, "max_preemptible_gpus"),
    ),
    Rule(
        "max_preemptible_gpus",
        "`max_preemptible_gpus` < `num_preemptible_gpus`",
        "a range's ceiling cannot be below its floor",
        partial(
            _ceiling_below_floor,
            "num_preemptible_gpus",
            "max_preemptible_gpus",
            "remove max_preemptible_gpus to hold the target at num_preemptible_gpus",
        ),
    ),
    Rule(
        "auto_scale_max_gpus",
        "`auto_scale` without `auto_scale_max_gpus`, or the reverse",
        "Together autoscales between `num_gpus` and `auto_scale_max_gpus`",
        _auto_scale_pair,
    ),
    Rule(
        "auto_scale_max_gpus",
        "`auto_scale_max_gpus` not a multiple of 8",
        "nodes have 8 GPUs each",
        partial(_not_multiple_of_8, "auto_scale_max_gpus"),
    ),
    Rule(
        "auto_scale_max_gpus",
        "`auto_scale_max_gpus` < `num_gpus`",
        "a range's ceiling cannot be below its floor",
        partial(
            _ceiling_below_floor,
            "num_gpus",
            "auto_scale_max_gpus",
            "set auto_scale=false and remove auto_scale_max_gpus",
        ),
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
        "`num_preemptible_gpus` or `max_preemptible_gpus` > 0 with `cluster_type = SLURM`",
        "Slurm clusters cannot use preemptible capacity yet",
        _slurm_preemptible,
    ),
    Rule(
        "project_id",
        "`project_id` unset while `num_preemptible_gpus` or `max_preemptible_gpus` > 0",
        "Together requires a project for a preemptible target",
        _preemptible_project,
    ),
    Rule(
        "volume_region",
        "`volume_region` (the attached volume's) differs from `region`",
        "Together attaches only a volume of the cluster's own region",
        _volume_region,
    ),
    Rule(
        "duration_days",
        "`duration_days` unset with `RESERVED` billing, or set without it",
        "only a reservation has a length (1..90 days)",
        _reservation_length,
    ),
    Rule(
        "nvidia_version_id",
        "`nvidia_version_id` with `cuda_version`/`nvidia_driver_version`",
        "Together takes the driver by catalogue id or by the CUDA + driver pair, one way",
        _driver_twice,
    ),
    *(
        Rule(
            half,
            f"`{half}` unset without `nvidia_version_id`",
            "without a catalogue id, Together needs both halves of the CUDA + driver pair",
            partial(_driver_half, half),
        )
        for half in ("cuda_version", "nvidia_driver_version")
    ),
    Rule(
        "num_capacity_pool_gpus",
        "`num_capacity_pool_gpus` not a multiple of 8",
        "nodes have 8 GPUs each",
        partial(_not_multiple_of_8, "num_capacity_pool_gpus"),
    ),
    Rule(
        "num_capacity_pool_gpus",
        "`num_capacity_pool_gpus` > `num_gpus`, or set without `capacity_pool_id`",
        "GPUs come from a pool only on a cluster created on one, and at most `num_gpus`",
        _capacity_pool,
    ),
    Rule(
        "num_reserved_gpus",
        "`num_reserved_gpus` not a multiple of 8",
        "nodes have 8 GPUs each",
        partial(_not_multiple_of_8, "num_reserved_gpus"),
    ),
    Rule(
        "num_reserved_gpus",
        "`num_reserved_gpus` without `RESERVED` billing",
        "only a reservation has prepaid GPUs",
        _reserved_gpus,
    ),
    Rule(
        "reservation_end_time",
        "`SCHEDULED_CAPACITY` without both reservation times, an end on an on-demand cluster, "
        "or an end not after the start",
        "a reservation is a window of prepaid time",
        _reservation_window,
    ),
    Rule(
        "reservation_end_time",
        "`reservation_end_time` earlier than the running reservation's",
        "Together extends a reservation; it never shortens one",
        _shortened,
    ),
    Rule(
        "add_ons",
        "an add-on added, removed or retyped in an update",
        "the update request only changes an existing add-on's config",
        _add_on_set,
    ),
    *kept_when_unset(CLUSTER),
)


# --- check and diff (the shared machinery in `rulebook`) ----------------------------------------


def _deletes_first(old_name: object, new_name: object) -> bool:
    """Pulumi creates a replacement before deleting the old cluster unless the provider asks
    otherwise. Delete first while `cluster_name` stays (or is not known yet): create-first would
    collide with the duplicate-name guard and bill two clusters of scarce GPUs for a while. A new
    name creates first, so there is no gap in capacity."""
    # An unknown new name is only seen in preview; `up` diffs again with the real value.
    if is_unknown(new_name):
        return True
    return not is_unknown(old_name) and old_name == new_name


def replacement_deletes_first(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """The replacement order of a cluster that is replaced, from its old and new inputs: delete
    first when the name stays (or is not known yet). What `plan` answers, for the PR preview."""
    return _deletes_first(old.get("cluster_name"), new.get("cluster_name"))


RULEBOOK: Final[Rulebook[ClusterSpec]] = Rulebook(
    CLUSTER,
    RULES,
    name_field="cluster_name",
    deletes_first=lambda old, new: _deletes_first(old.cluster_name, new.cluster_name),
)

__all__ = [
    "FIELD_POLICIES",
    "RULEBOOK",
    "RULES",
    "ClusterDraft",
    "Plan",
    "Rule",
    "replacement_deletes_first",
]
