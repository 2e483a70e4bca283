"""Validate and plan are the same for every resource, so they are written once here, generic over
its `Schema`; a resource's rules module declares only its own rejection `Rule`s and replacement
order. Pure: no I/O."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Generic

from together_provider.framework.schema import (
    Draft,
    Failure,
    Policy,
    S,
    Schema,
    Unknown,
    is_unknown,
    without_host_keys,
)

__all__ = ["Plan", "Rule", "Rulebook", "differs", "kept_when_unset", "replacing_fields", "wanted"]


@dataclass(frozen=True)
class Rule(Generic[S]):
    """One rejection: the field it is reported on, when it applies and why (both for the reference).

    `check(new, old)` (old is None on create) returns the reason it is rejected, or None."""

    field: str
    when: str
    why: str
    check: Callable[[Draft[S], Draft[S] | None], str | None]


@dataclass(frozen=True)
class Plan:
    """The meaning of a diff: which fields changed, which force a replacement, what to PUT.

    `update` holds only changed, known, in-place API fields (keyed by wire name), and is empty for
    a replacement (the new resource is created with every field; nothing is PUT to the old one).
    """

    changed: tuple[str, ...] = ()
    replaces: tuple[str, ...] = ()
    update: dict[str, Any] = field(default_factory=dict)
    delete_before_replace: bool = False

    @property
    def has_changes(self) -> bool:
        return bool(self.changed)


def differs(old: object, new: object) -> bool:
    """An unknown on either side counts as different; 8 == 8.0 is not a change."""
    return old is Unknown.VALUE or new is Unknown.VALUE or old != new


def replacing_fields(schema: Schema[S], old: Draft[S], new: Draft[S]) -> tuple[str, ...]:
    """REPLACE fields that differ, given evidence: unknown in new, or known in old and different."""
    return tuple(
        name
        for name, policy in schema.policies.items()
        if policy is Policy.REPLACE
        and getattr(old, name) is not Unknown.VALUE
        and differs(getattr(old, name), getattr(new, name))
    )


def wanted(schema: Schema[S], old: Draft[S] | None, new: Draft[S], name: str) -> Any:
    """The value field `name` should have live after the change: its new value, or, for a floor
    whose ceiling is set (a declared range), the old (live) value clamped into [floor, ceiling],
    so a live value inside the range is left alone and one outside goes to the nearest bound.
    `Unknown.VALUE` when it cannot be known yet."""
    value = getattr(new, name)
    ceiling_field = schema.ranges.get(name)
    if ceiling_field is None or old is None:
        return value
    ceiling = getattr(new, ceiling_field)
    if ceiling is None:
        return value
    live = getattr(old, name)
    if Unknown.VALUE in (value, ceiling):
        return Unknown.VALUE
    if not isinstance(live, int) or isinstance(live, bool):
        return value  # nothing known of the live value (older state): the floor
    return min(max(live, value), ceiling)


def _unset_in_place(
    schema: Schema[S], name: str, new: Draft[S], old: Draft[S] | None
) -> str | None:
    if old is None or getattr(new, name) is not None:
        return None
    was = getattr(old, name)
    if was is None or isinstance(was, Unknown):
        return None
    return (
        f"{name} was {was!r} and is now unset; Together's update request keeps a field it omits, "
        f"so it cannot be unset in place (set {name} again, or replace the {schema.noun}, e.g. "
        "with a new name)"
    )


def kept_when_unset(schema: Schema[S]) -> tuple[Rule[S], ...]:
    """One rule per optional in-place API field: unsetting it is refused at check, since an
    update request keeps what it omits (the change would preview and then do nothing)."""
    return tuple(
        Rule(
            f.name,
            f"`{f.name}` unset after it was set",
            "an update request keeps a field it omits, so nothing could unset it",
            partial(_unset_in_place, schema, f.name),
        )
        for f in schema.inputs
        if f.policy is Policy.IN_PLACE and f.wire is not None and f.optional
    )


def _creates_first(_old: Draft[Any], _new: Draft[Any]) -> bool:
    return False


class Rulebook(Generic[S]):
    """One resource's rules over its schema: validate, check, plan.

    `name_field` names the resource in every failure (`cluster 'train': ...`); `deletes_first`
    answers a replacement's order from the old and new drafts (default: create first).

    Unknowns are never rejected: a rule skips when its inputs are unknown, an unknown REPLACE
    field counts as a replacement and an unknown mutable field as an in-place change. A value
    missing or unreadable in the *old* outputs never forces a replacement.
    """

    def __init__(
        self,
        schema: Schema[S],
        rules: Sequence[Rule[S]],
        *,
        name_field: str,
        deletes_first: Callable[[Draft[S], Draft[S]], bool] = _creates_first,
    ) -> None:
        self.schema = schema
        self.rules = tuple(rules)
        self.name_field = name_field
        self._deletes_first = deletes_first

    def rule_failures(self, new: Draft[S] | S, old: Draft[S] | S | None) -> list[Failure]:
        """The cross-field rules over parsed values, drafts or resolved specs (`old` None on
        create)."""
        new_draft, old_draft = Draft.of(new), None if old is None else Draft.of(old)
        return [
            Failure(rule.field, reason)
            for rule in self.rules
            if (reason := rule.check(new_draft, old_draft)) is not None
        ]

    def failures(self, name: str, new: Draft[S] | S, old: Draft[S] | S | None) -> list[Failure]:
        """`rule_failures`, each naming the resource: what adoption refuses, from parsed values."""
        return self._prefixed(name, self.rule_failures(new, old))

    def _prefixed(self, name: str, failures: list[Failure]) -> list[Failure]:
        return [Failure(f.field, f"{self.schema.noun} {name!r}: {f.reason}") for f in failures]

    def _parse_both(
        self, new: Mapping[str, Any], old: Mapping[str, Any] | None
    ) -> tuple[Draft[S], list[Failure]]:
        new_draft, failures = self.schema.parse(new)
        old_draft = self.schema.parse(old)[0] if old else None
        return new_draft, failures + self.rule_failures(new_draft, old_draft)

    def validate(
        self, name: str, new: Mapping[str, Any], old: Mapping[str, Any] | None
    ) -> list[Failure]:
        """The check-time rules. `old` is the previous inputs: None or {} on create and replacement.

        Field-local failures (types, unknown keys, enums, ranges) come first; the cross-field rules
        then run on every field that parsed, so one check reports as much as it can.
        """
        return self._prefixed(name, self._parse_both(new, old)[1])

    def check_inputs(
        self, name: str, new: Mapping[str, Any], old: Mapping[str, Any] | None
    ) -> tuple[dict[str, Any], list[Failure]]:
        """What the provider's check returns: normalised inputs (raw ones on failure), failures."""
        new_draft, failures = self._parse_both(new, old)
        if failures:
            return without_host_keys(new), self._prefixed(name, failures)
        return self.schema.to_props(new_draft), []

    def check_resource(
        self, olds: Mapping[str, Any], news: Mapping[str, Any]
    ) -> tuple[dict[str, Any], list[Failure]]:
        """A host's check: host keys (`__provider`) dropped, the resource named from `news`."""
        new, old = without_host_keys(news), without_host_keys(olds)
        raw_name = new.get(self.name_field)
        name = raw_name if isinstance(raw_name, str) and not is_unknown(raw_name) else "(unnamed)"
        return self.check_inputs(name, new, old or None)

    def plan_drafts(self, old: Draft[S] | S, new: Draft[S] | S) -> Plan:
        """`plan` over parsed values: drafts, or resolved specs (what the lifecycle holds)."""
        old, new = Draft.of(old), Draft.of(new)
        policies = self.schema.policies
        targets = {name: wanted(self.schema, old, new, name) for name in policies}
        changed = tuple(name for name in policies if differs(getattr(old, name), targets[name]))
        replaces = replacing_fields(self.schema, old, new)
        update = {
            wire: self._put(name, getattr(old, name), value)
            for name in changed
            if policies[name] is Policy.IN_PLACE
            and (wire := self.schema.by_name[name].wire) is not None
            and (value := targets[name]) is not None
            and not isinstance(value, Unknown)
        }
        return Plan(
            changed=changed,
            replaces=replaces,
            update={} if replaces else update,
            delete_before_replace=bool(replaces) and self._deletes_first(old, new),
        )

    def _put(self, name: str, old: Any, new: Any) -> Any:
        """What the update request carries for a changed in-place field: the new value, or what
        its `put` hook makes of the change (only the add-ons whose config changed, say)."""
        put = self.schema.by_name[name].put
        if put is None or old is None or isinstance(old, Unknown):
            return new
        return put(old, new)

    def plan(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> Plan:
        """Diff previous outputs against checked inputs; output-only keys in `old` are ignored."""
        return self.plan_drafts(self._draft(old), self._draft(new))

    def _draft(self, props: Mapping[str, Any]) -> Draft[S]:
        return self.schema.parse({k: v for k, v in props.items() if k in self.schema.policies})[0]
