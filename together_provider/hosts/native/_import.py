"""`pulumi import`: a read with no previous state must return every input, from the live object,
because what it returns is what `pulumi import` writes into the program."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:  # a preview's diff uses `completed`; it must not load httpx or pydantic
    from together_provider.framework.kind import Kind
    from together_provider.framework.lifecycle import Lifecycle, Observed

UNREAD: Final = "__unread"
"""State key: the inputs an import could not read from Together (host bookkeeping: the
lifecycles ignore `__` keys). Together reports no volume's region, project or lifecycle
independence; until the resource's first update a diff takes those from the program instead of
calling them changes, and nothing is guessed: the first update stores the program's values."""


def _unread(kind: Kind) -> list[str]:
    return [f.name for f in kind.schema.inputs if not f.live]


def _keep_unread(observed: Observed | None, unread: list[str]) -> Observed | None:
    still = [name for name in unread if observed is not None and name not in observed.inputs]
    if observed is None or not still:
        return observed
    return replace(observed, outputs={**observed.outputs, UNREAD: still})


def read(
    kind: Kind, lifecycle: Lifecycle[Any], id_: str, props: Mapping[str, Any]
) -> Observed | None:
    """Refresh as the lifecycle does. For an import (no previous inputs, only the id) the
    lifecycle's one read fills every input whose table entry names where Together reports it
    (`live=`, `Schema.live_inputs`); the rest are recorded as unread. A matching program then
    previews with no changes."""
    imported = not any(name in props for name in kind.schema.input_names)
    unread = _unread(kind) if imported else list(props.get(UNREAD) or ())
    return _keep_unread(lifecycle.read(id_, kind.schema.stored(props)), unread)


def completed(old_state: Mapping[str, Any], news: Mapping[str, Any]) -> dict[str, Any]:
    """The old state with the inputs an import could not read taken from the program."""
    unread = [name for name in old_state.get(UNREAD) or () if name not in old_state]
    return {**old_state, **{name: news[name] for name in unread if name in news}}
