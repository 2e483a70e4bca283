"""Read one stack's `pulumi preview --json` into a plan of Together cluster changes. Pure: no I/O.

Why our own diff: for a dynamic provider the engine reports no per-field diff (`diffReasons` is
empty, `detailedDiff` null), so each field change comes from `oldState.inputs` vs
`newState.inputs`. `replaceReasons` is the engine's word on what forces a replacement.

What the engine prints, checked against CLI v3.274.1:
- unchanged resources are left out unless the preview ran with `--show-sames`;
- a replacement is one `replace` step, or three (`delete-replaced`, `replace`,
  `create-replacement`) with `--show-replacement-steps`;
- a spec rejected at check has no step at all: only an error diagnostic whose `urn` is the
  cluster's, "error: <type> resource '<name>': property <p> value {<v>} has a problem: <why>",
  followed by "Resource monitor has terminated" without a urn; the CLI exits 1 and the plan is
  incomplete (the engine stops at the first rejected spec).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from together_provider.cluster import rules
from together_provider.framework.rulebook import Plan
from together_provider.framework.schema import UNKNOWN
from together_provider.preview.guardrails import GuardrailBreach
from together_provider.preview.policy import PolicyViolation
from together_provider.preview.prices import (
    PreviewInputError,
    PriceTable,
    hourly_cost,
    stack_overrides,
)
from together_provider.preview.volumes import VolumeChange, volume_change
from together_provider.registry import BY_TYPE, CLUSTER, VOLUME

_REPLACE_OPS: Final = frozenset({"replace", "create-replacement", "delete-replaced"})
_MONITOR_NOISE: Final = "Resource monitor has terminated"


class Outcome(enum.IntEnum):
    """A stack's verdict; the value is the CLI's exit code and the order is severity."""

    NO_CHANGES = 0
    CHANGES = 10
    REPLACEMENT = 11
    BLOCKED = 12


BAD_INPUT_EXIT: Final = 2
"""Exit code for unreadable input (also argparse's usage-error code); nothing is written."""
GITHUB_ERROR_EXIT: Final = 13
"""Exit code when GitHub refused or could not take the comment or issue (`--github-pr`)."""


class Action(enum.StrEnum):
    """What happens to a cluster; declared in merge priority (a replacement beats the rest)."""

    REPLACE = "replace"
    DELETE = "delete"
    CREATE = "create"
    UPDATE = "in-place update"
    OTHER = "other"
    SAME = "unchanged"


_ACTIONS: Final[Mapping[str, Action]] = {
    "create": Action.CREATE,
    "update": Action.UPDATE,
    "delete": Action.DELETE,
    "same": Action.SAME,
    "refresh": Action.SAME,
    "read": Action.SAME,
    **dict.fromkeys(_REPLACE_OPS, Action.REPLACE),
}


@dataclass(frozen=True)
class Sizing:
    """What a cluster bills for: GPU type, standard GPUs and preemptible target (None = unknown).

    With a declared range (`max_preemptible_gpus`, Together's `auto_scale_max_gpus`) the counts
    are the floors and the `*_max` the ceilings; None when no range is declared."""

    gpu_type: str | None
    standard: int | None
    preemptible: int | None
    standard_max: int | None = None
    preemptible_max: int | None = None

    @property
    def ranged(self) -> bool:
        return self.standard_max is not None or self.preemptible_max is not None

    @property
    def at_ceiling(self) -> Sizing:
        """The same cluster with every range at its ceiling: what it can bill at most."""
        return Sizing(
            self.gpu_type,
            self.standard_max if self.standard_max is not None else self.standard,
            self.preemptible_max if self.preemptible_max is not None else self.preemptible,
        )


@dataclass(frozen=True)
class FieldChange:
    name: str
    old: Any
    new: Any
    replaces: bool


@dataclass(frozen=True)
class ClusterChange:
    """One Together cluster in the plan, with its costs in USD per hour (None = unknown)."""

    name: str
    action: Action
    op: str
    old: Sizing | None
    new: Sizing | None
    allocated: int | None
    fields: tuple[FieldChange, ...]
    replace_reasons: tuple[str, ...]
    delete_first: bool
    old_cost: float | None
    new_cost: float | None
    volume_id: str | None = None
    """The shared volume the cluster had attached (its old inputs), if known."""
    live_standard: int | None = None
    live_preemptible: int | None = None
    """The live counts before the change (standard GPUs, preemptible target), if known."""
    ceiling_cost: float | None = None
    """With a declared range: the new cost/h with every range at its ceiling."""


@dataclass(frozen=True)
class Rejection:
    """A spec Together cannot honour, refused at check: the cluster and the provider's reason."""

    cluster: str | None
    message: str


@dataclass(frozen=True)
class StackPlan:
    stack: str
    project: str | None
    source: str
    clusters: tuple[ClusterChange, ...]
    rejections: tuple[Rejection, ...]
    errors: tuple[str, ...]
    change_summary: Mapping[str, int]
    prices: PriceTable
    volumes: tuple[VolumeChange, ...] = ()
    policy: tuple[PolicyViolation, ...] = ()
    """The policy pack's violations (from the preview's event log); a mandatory one blocks."""
    guardrails: tuple[GuardrailBreach, ...] = ()
    """The cost thresholds the change crosses (`guardrails.breaches`); any one blocks."""

    @property
    def outcome(self) -> Outcome:
        """Blocked beats replacement beats changes; other resources count through the summary."""
        if self.rejections or self.errors or self.guardrails or any(v.blocks for v in self.policy):
            return Outcome.BLOCKED
        actions = {c.action for c in self.clusters} | {v.action for v in self.volumes}
        ops = {op for op, count in self.change_summary.items() if count}
        if actions & {Action.REPLACE, Action.DELETE} or ops & (_REPLACE_OPS | {"delete"}):
            return Outcome.REPLACEMENT
        if actions - {Action.SAME} or ops - {"same"}:
            return Outcome.CHANGES
        return Outcome.NO_CHANGES

    @property
    def lists_unchanged(self) -> bool:
        changes: list[ClusterChange | VolumeChange] = [*self.clusters, *self.volumes]
        return any(c.action is Action.SAME for c in changes)


def _parse_urn(urn: str) -> tuple[str, str, str, str] | None:
    """(stack, project, type, name) of `urn:pulumi:<stack>::<project>::<parent$type>::<name>`."""
    parts = urn.split("::")
    if len(parts) < 4 or not parts[0].startswith("urn:pulumi:"):
        return None
    return (
        parts[0].removeprefix("urn:pulumi:"),
        parts[1],
        parts[2].split("$")[-1],
        "::".join(parts[3:]),
    )


def _count(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def _known_str(value: object) -> str | None:
    return value if isinstance(value, str) and value != UNKNOWN else None


def _props(state: object, key: str) -> dict[str, Any]:
    if not isinstance(state, dict):
        return {}
    props = state.get(key)
    return props if isinstance(props, dict) else {}


def _sizing(state: object) -> Sizing | None:
    if not isinstance(state, dict):
        return None
    props = {**_props(state, "outputs"), **_props(state, "inputs")}
    return Sizing(
        gpu_type=_known_str(props.get("gpu_type")),
        standard=_count(props.get("num_gpus")),
        preemptible=_count(props.get("num_preemptible_gpus", 0)),
        standard_max=_count(props.get("auto_scale_max_gpus")),
        preemptible_max=_count(props.get("max_preemptible_gpus")),
    )


def _declared(old: Sizing | None, new: Sizing | None) -> tuple[Sizing | None, Sizing | None]:
    """The floors as declared: a refreshed old state holds the *live* value of a ranged floor,
    which is not what the program declared; shown beside the range instead (`live_*`)."""
    if old is None or new is None or not (old.ranged or new.ranged):
        return old, new
    return (
        Sizing(
            old.gpu_type,
            new.standard if old.standard_max is not None else old.standard,
            new.preemptible if old.preemptible_max is not None else old.preemptible,
            old.standard_max,
            old.preemptible_max,
        ),
        new,
    )


_RANGED_WIRE: Final = frozenset(
    wire for floor in CLUSTER.schema.ranges if (wire := CLUSTER.schema.by_name[floor].wire)
)
"""The wire names of the Cluster's ranged floors: a PUT of one moves a live value to a bound."""


def _billed(live: Sizing | None, planned: Plan | None) -> tuple[Sizing, Sizing] | None:
    """What a ranged cluster bills for before and after the update when the rules PUT a ranged
    count (its live value fell outside the new range): the live counts now, the PUT's after.
    None when no ranged count is PUT: both sides then stay at the declared floor."""
    if live is None or planned is None or not planned.update.keys() & _RANGED_WIRE:
        return None
    after = Sizing(
        live.gpu_type,
        planned.update.get("num_gpus", live.standard),
        planned.update.get("num_preemptible_gpus", live.preemptible),
    )
    return Sizing(live.gpu_type, live.standard, live.preemptible), after


def _cost(sizing: Sizing | None, prices: PriceTable, where: str) -> float | None:
    if sizing is None:
        return 0.0
    if sizing.gpu_type is None or sizing.standard is None or sizing.preemptible is None:
        return None
    return hourly_cost(prices, sizing.gpu_type, sizing.standard, sizing.preemptible, where)


def _planned(old: object, new: object) -> Plan | None:
    """The rules' plan of the change, as the provider's diff makes it (None for a create)."""
    before = _props(old, "inputs")
    return (
        rules.plan({**_props(old, "outputs"), **before}, _props(new, "inputs")) if before else None
    )


def _field_changes(
    old: object, new: object, replace_reasons: Sequence[str], planned: Plan | None
) -> tuple[FieldChange, ...]:
    before, after = _props(old, "inputs"), _props(new, "inputs")
    # A ranged floor whose live value stays inside the range is no change, and one outside
    # goes to the nearest bound, not to the floor: the rules' word, as the provider's diff.
    ranged = CLUSTER.schema.ranges
    return tuple(
        FieldChange(
            key,
            before.get(key),
            planned.update.get(key, after.get(key))
            if planned and key in ranged
            else after.get(key),
            key in replace_reasons,
        )
        for key in sorted(before.keys() | after.keys())
        if not key.startswith("__")
        and before.get(key) != after.get(key)
        and (key not in ranged or (planned is not None and key in planned.changed))
    )


def _merge(
    steps: Sequence[dict[str, Any]],
) -> tuple[list[str], Action, Any, Any, tuple[str, ...]]:
    """One resource's steps as (ops, action, old state, new state, replace reasons)."""
    ops = [str(step["op"]) for step in steps]
    actions = {_ACTIONS.get(op, Action.OTHER) for op in ops}
    action = next(a for a in Action if a in actions)
    planned = [s for s in steps if s["op"] != "refresh"] or list(steps)
    old_state = next((s["oldState"] for s in planned if s.get("oldState")), None)
    new_state = next((s["newState"] for s in planned if s.get("newState")), None)
    if action is Action.DELETE:
        new_state = None
    if action is Action.CREATE:
        old_state = None
    reasons = tuple(dict.fromkeys(str(r) for s in steps for r in (s.get("replaceReasons") or [])))
    return ops, action, old_state, new_state, reasons


def _volume(name: str, steps: Sequence[dict[str, Any]], prices: PriceTable) -> VolumeChange:
    _ops, action, old_state, new_state, reasons = _merge(steps)
    if action is Action.SAME:
        new_state = old_state
    return volume_change(name, action, old_state, new_state, reasons, prices.storage_per_tib_month)


def _cluster(
    name: str, steps: Sequence[dict[str, Any]], prices: PriceTable, where: str
) -> ClusterChange:
    """Merge one cluster's steps into one change.

    A replacement may print three steps; `preview --refresh` prints a `refresh` step first, whose
    states are the stored and the live ones, so the states come from the other steps.
    """
    ops, action, old_state, new_state, reasons = _merge(steps)
    live = _sizing(old_state)
    old, new = _declared(live, _sizing(new_state))
    old_inputs, new_inputs = _props(old_state, "inputs"), _props(new_state, "inputs")
    old_outputs = _props(old_state, "outputs")
    planned = (
        _planned(old_state, new_state) if action not in (Action.CREATE, Action.DELETE) else None
    )
    billed = _billed(live, planned) if action is Action.UPDATE and new and new.ranged else None
    if action is Action.SAME:
        new = old
    return ClusterChange(
        name=name,
        action=action,
        op="/".join(dict.fromkeys(ops)),
        old=old,
        new=new,
        allocated=_count(_props(old_state, "outputs").get("allocated_preemptible_gpus")),
        fields=()
        if action in (Action.CREATE, Action.DELETE)
        else _field_changes(old_state, new_state, reasons, planned),
        replace_reasons=reasons,
        delete_first=action is Action.REPLACE
        and rules.replacement_deletes_first(old_inputs, new_inputs),
        old_cost=_cost(billed[0] if billed else old, prices, where),
        new_cost=_cost(billed[1] if billed else new, prices, where),
        volume_id=_known_str(old_inputs.get("volume_id")),
        live_standard=_count(old_outputs.get("num_gpus")),
        live_preemptible=_count(old_outputs.get("desired_preemptible_gpus")),
        ceiling_cost=_cost(new.at_ceiling, prices, where) if new and new.ranged else None,
    )


def _diagnostic_message(message: str) -> str:
    """The provider's own words: drop the severity prefix and the engine's property wrapper."""
    text = message.strip().removeprefix("error: ").strip()
    marker = " has a problem: "
    return text.split(marker, 1)[1] if marker in text else text


def _list(document: Mapping[str, Any], key: str, where: str) -> list[dict[str, Any]]:
    value = document.get(key) or []
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise PreviewInputError(where, f"'{key}' must be a list of objects")
    return value


def build_plan(
    document: object, source: str, prices: PriceTable, stack_name: str | None = None
) -> StackPlan:
    """Turn a parsed preview document into a plan; a document of the wrong shape is refused.

    The stack name is `stack_name` when given, else the one in the URNs, else `source`.
    """
    if not isinstance(document, dict) or not ({"steps", "changeSummary"} & document.keys()):
        raise PreviewInputError(
            source,
            "not a `pulumi preview --json` document (expected an object with 'steps' and "
            "'changeSummary')",
            fix="pass the JSON that `pulumi preview --json` printed on stdout",
        )
    steps = _list(document, "steps", source)
    diagnostics = _list(document, "diagnostics", source)
    config = document.get("config") or {}
    summary = document.get("changeSummary") or {}
    if not isinstance(config, dict) or not isinstance(summary, dict):
        raise PreviewInputError(source, "'config' and 'changeSummary' must be objects")

    urns = [s.get("urn") for s in steps] + [d.get("urn") for d in diagnostics]
    parsed = [p for urn in urns if isinstance(urn, str) and (p := _parse_urn(urn))]
    stack = stack_name or (parsed[0][0] if parsed else source)
    project = parsed[0][1] if parsed else None

    by_kind: dict[str, dict[str, list[dict[str, Any]]]] = {type_: {} for type_ in BY_TYPE}
    for step in steps:
        if not isinstance(step.get("op"), str) or not isinstance(step.get("urn"), str):
            raise PreviewInputError(
                source, f"a step without a string 'op' and 'urn': {step!r:.200}"
            )
        urn = _parse_urn(step["urn"])
        if urn and urn[2] in by_kind:
            by_kind[urn[2]].setdefault(urn[3], []).append(step)
    by_cluster, by_volume = by_kind[CLUSTER.dynamic_type], by_kind[VOLUME.dynamic_type]

    rejections: list[Rejection] = []
    errors: list[str] = []
    for diagnostic in diagnostics:
        if diagnostic.get("severity") != "error":
            continue
        urn = _parse_urn(str(diagnostic.get("urn") or ""))
        message = _diagnostic_message(str(diagnostic.get("message", "")))
        if urn and urn[2] in BY_TYPE:
            rejections.append(Rejection(urn[3], message))
        else:
            errors.append(message)
    if rejections:
        errors = [e for e in errors if _MONITOR_NOISE not in e]

    has_clusters_config = project is not None and f"{project}:clusters" in config
    if not by_cluster and not by_volume and not rejections and not has_clusters_config:
        raise PreviewInputError(
            source,
            f"no Together cluster in this preview: no step of type {CLUSTER.dynamic_type} and no "
            f"'<project>:clusters' config (project {project or 'unknown'})",
            fix="is this the preview of another project? Run it in this repository's program",
        )

    table = prices.with_overrides(stack_overrides(config, project, source))
    return StackPlan(
        stack=stack,
        project=project,
        source=source,
        clusters=tuple(_cluster(n, s, table, source) for n, s in by_cluster.items()),
        rejections=tuple(rejections),
        errors=tuple(errors),
        change_summary={str(k): v for k, v in summary.items() if isinstance(v, int)},
        prices=table,
        volumes=tuple(_volume(n, s, table) for n, s in by_volume.items()),
    )
