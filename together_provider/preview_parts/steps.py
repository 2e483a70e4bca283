"""One resource's steps from `pulumi preview --json`: its action, counts and merged states. Pure,
and free of the registry, so each kind's `preview.py` builds on it without the plan that loops
over the kinds."""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from typing import Any, Final

from together_provider.framework.schema import UNKNOWN

__all__ = ["REPLACE_OPS", "Action", "count", "known_str", "merge", "props_of"]

# What the engine prints, checked against CLI v3.274.1: a replacement is one `replace` step, or
# three (`delete-replaced`, `replace`, `create-replacement`) with `--show-replacement-steps`.
REPLACE_OPS: Final = frozenset({"replace", "create-replacement", "delete-replaced"})


class Action(enum.StrEnum):
    """What happens to a resource; declared in merge priority (a replacement beats the rest)."""

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
    **dict.fromkeys(REPLACE_OPS, Action.REPLACE),
}


def count(value: object) -> int | None:
    """A whole count, or None (unset, unknown, or not a count)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def known_str(value: object) -> str | None:
    return value if isinstance(value, str) and value != UNKNOWN else None


def props_of(state: object, key: str) -> dict[str, Any]:
    """A step state's `inputs` or `outputs` (empty when absent)."""
    if not isinstance(state, dict):
        return {}
    props = state.get(key)
    return props if isinstance(props, dict) else {}


def merge(
    steps: Sequence[dict[str, Any]],
) -> tuple[list[str], Action, Any, Any, tuple[str, ...]]:
    """One resource's steps as (ops, action, old state, new state, replace reasons).

    The replace reasons are the steps' `replaceReasons`: the engine's word on what forces a
    replacement.
    """
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
