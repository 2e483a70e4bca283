"""Read one stack's `pulumi preview --json` into a plan of Together changes, each kind merging
its own steps: for a dynamic provider the engine reports no per-field diff (`diffReasons` is
empty, `detailedDiff` null). Pure: no I/O."""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from together_provider.extensions import PreviewExtension, StackConfigExtension, config_key
from together_provider.framework.kind import Kind
from together_provider.preview_parts.kinds import Change, preview_of
from together_provider.preview_parts.prices import PreviewInputError, PriceTable, stack_overrides
from together_provider.preview_parts.steps import REPLACE_OPS, Action
from together_provider.registry import BY_TYPE, KINDS

_MONITOR_NOISE: Final = "Resource monitor has terminated"
"""The engine's error without a urn that follows a rejected spec's diagnostic."""


class Outcome(enum.IntEnum):
    """A stack's verdict; the value is the CLI's exit code and the order is severity."""

    NO_CHANGES = 0
    CHANGES = 10
    REPLACEMENT = 11
    BLOCKED = 12


BAD_INPUT_EXIT: Final = 2
"""Exit code for unreadable input (also argparse's usage-error code); nothing is written."""


@dataclass(frozen=True)
class Rejection:
    """A spec Together cannot honour, refused at check: the resource and the provider's reason."""

    resource: str | None
    message: str

    @property
    def cluster(self) -> str | None:
        """The name it had when only clusters were previewed."""
        return self.resource


def previewed() -> list[Kind]:
    """The kinds the comment shows (each declares a `PreviewExtension`), in the registry's order."""
    return [kind for kind in KINDS if kind.get(PreviewExtension)]


@dataclass(frozen=True)
class StackPlan:
    """One stack's changes, by kind: `changes[config_key(kind)]` (`changes["clusters"]`)."""

    stack: str
    project: str | None
    source: str
    changes: Mapping[str, tuple[Change, ...]]
    """Each previewed kind's changes (in the registry's order), by `config_key`."""
    rejections: tuple[Rejection, ...]
    errors: tuple[str, ...]
    change_summary: Mapping[str, int]
    prices: PriceTable
    fail_on_placeholder: bool = False
    """The stack's `<project>:failOnPlaceholderPrices`: a guardrail crossed on placeholder rates
    blocks too."""
    refreshed: bool = False
    """The preview ran with `--refresh`: its live figures were read from Together just now."""
    state_time: str | None = None
    """Without `--refresh`: when the stored state its live figures come from was last written
    (the latest `modified` of the Together resources' old states, as "YYYY-MM-DD HH:MM UTC")."""

    # The derived facts are plain functions below (mutmut mutates no decorated function): the
    # properties only name them on the plan.
    @property
    def outcome(self) -> Outcome:
        return plan_outcome(self)

    @property
    def all_changes(self) -> tuple[Change, ...]:
        return all_changes(self)

    @property
    def lists_unchanged(self) -> bool:
        return lists_unchanged(self)

    def kinds(self) -> list[tuple[Kind, tuple[Change, ...]]]:
        """Each previewed kind (`previewed`) with its changes, in the registry's order."""
        return [(kind, self.changes[config_key(kind)]) for kind in previewed()]


def plan_outcome(plan: StackPlan) -> Outcome:
    """Blocked beats replacement beats changes; other resources count through the summary. The
    plan's own: what policy and guardrails add is the `verdict.Verdict`'s."""
    if plan.rejections or plan.errors:
        return Outcome.BLOCKED
    actions = {c.action for c in all_changes(plan)}
    ops = {op for op, count in plan.change_summary.items() if count}
    if actions & {Action.REPLACE, Action.DELETE} or ops & (REPLACE_OPS | {"delete"}):
        return Outcome.REPLACEMENT
    if actions - {Action.SAME} or ops - {"same"}:
        return Outcome.CHANGES
    return Outcome.NO_CHANGES


def all_changes(plan: StackPlan) -> tuple[Change, ...]:
    """Every previewed kind's changes, in the registry's order."""
    return tuple(c for changes in plan.changes.values() for c in changes)


def lists_unchanged(plan: StackPlan) -> bool:
    """The preview listed unchanged resources: the engine leaves them out unless it ran with
    `--show-sames`."""
    return any(c.action is Action.SAME for c in all_changes(plan))


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


FAIL_ON_PLACEHOLDER_KEY: Final = "failOnPlaceholderPrices"
"""Stack config key (in the project namespace): `true` makes a guardrail crossed on placeholder
rates block the PR like any other (default: it only warns)."""


def _flag(config: Mapping[str, Any], project: str | None, name: str, where: str) -> bool:
    """A boolean project config key of the preview's `config` (printed as "true" / "false")."""
    raw = config.get(f"{project}:{name}") if project else None
    if raw is None or raw in (False, "false"):
        return False
    if raw in (True, "true"):
        return True
    raise PreviewInputError(
        where,
        f"config {project}:{name} must be true or false, got {raw!r}",
        fix=f"set it with `pulumi config set {name} true` (or false)",
    )


_TIME: Final = re.compile(r"^(\d{4}-\d\d-\d\d)T(\d\d:\d\d)(?::[\d.]+)?(Z|[+-]\d\d:\d\d)$")


def state_time(steps: Sequence[Mapping[str, Any]]) -> str | None:
    """When the stored state of these steps was last written: the latest `oldState.modified`
    (the engine sets it at each create, update or refresh that changed a value), in UTC."""
    found = []
    for step in steps:
        old = step.get("oldState")
        match = _TIME.match(str(old.get("modified") or "")) if isinstance(old, dict) else None
        if match and match[3] in ("Z", "+00:00"):
            found.append(f"{match[1]} {match[2]} UTC")
    return max(found, default=None)


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


def _steps_by_kind(
    steps: Sequence[dict[str, Any]], source: str
) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """The Together resources' steps: by type, then by resource name (a resource's steps in
    order); a step without a string `op` and `urn` is refused."""
    by_kind: dict[str, dict[str, list[dict[str, Any]]]] = {type_: {} for type_ in BY_TYPE}
    for step in steps:
        if not isinstance(step.get("op"), str) or not isinstance(step.get("urn"), str):
            raise PreviewInputError(
                source, f"a step without a string 'op' and 'urn': {step!r:.200}"
            )
        urn = _parse_urn(step["urn"])
        if urn and urn[2] in by_kind:
            by_kind[urn[2]].setdefault(urn[3], []).append(step)
    return by_kind


def _diagnosed(diagnostics: Sequence[dict[str, Any]]) -> tuple[list[Rejection], list[str]]:
    """The specs rejected at check, and the other errors.

    A spec rejected at check has no step at all: only an error diagnostic whose `urn` is the
    resource's, "error: <type> resource '<name>': property <p> value {<v>} has a problem:
    <why>", then "Resource monitor has terminated" without a urn; the CLI exits 1 and the plan
    is incomplete (the engine stops at the first rejected spec). Checked against CLI v3.274.1.
    """
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
    return rejections, errors


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

    by_kind = _steps_by_kind(steps, source)
    rejections, errors = _diagnosed(diagnostics)

    required = [kind for kind in KINDS if kind[StackConfigExtension].required]
    has_config = project is not None and any(
        f"{project}:{config_key(k)}" in config for k in required
    )
    if not any(by_kind.values()) and not rejections and not has_config:
        nouns = " or ".join(kind.schema.noun for kind in required)
        types = " or ".join(kind.dynamic_type for kind in required)
        keys = " or ".join(f"'<project>:{config_key(kind)}'" for kind in required)
        raise PreviewInputError(
            source,
            f"no Together {nouns} in this preview: no step of type {types} and no {keys} config "
            f"(project {project or 'unknown'})",
            fix="is this the preview of another project? Run it in this repository's program",
        )

    table = prices.with_overrides(stack_overrides(config, project, source))
    together_steps = [s for found in by_kind.values() for ss in found.values() for s in ss]
    refreshed = any(step["op"] == "refresh" for step in steps)
    changes: dict[str, tuple[Change, ...]] = {}
    for kind in previewed():
        preview = preview_of(kind)
        found = by_kind[kind.dynamic_type].items()
        changes[config_key(kind)] = tuple(preview.change(n, s, table, source) for n, s in found)
    return StackPlan(
        stack=stack,
        project=project,
        source=source,
        changes=changes,
        rejections=tuple(rejections),
        errors=tuple(errors),
        change_summary={str(k): v for k, v in summary.items() if isinstance(v, int)},
        prices=table,
        fail_on_placeholder=_flag(config, project, FAIL_ON_PLACEHOLDER_KEY, source),
        refreshed=refreshed,
        state_time=None if refreshed else state_time(together_steps),
    )
