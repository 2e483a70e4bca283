"""What the PR preview asks of each kind (`preview_of(kind)`), so that its plan and comment loop
over `registry.KINDS` and name no kind. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from together_provider.extensions import PreviewExtension, StackConfigExtension
from together_provider.framework.kind import Kind
from together_provider.framework.schema import UNKNOWN

if TYPE_CHECKING:
    from together_provider.preview_parts.prices import PriceTable


class Change(Protocol):
    """One resource in the plan, as the comment's shared parts read it."""

    @property
    def name(self) -> str: ...
    @property
    def action(self) -> Any: ...  # plan.Action
    @property
    def old_cost(self) -> float | None: ...
    @property
    def new_cost(self) -> float | None: ...


class StackPlan(Protocol):
    """What a kind's preview reads of the whole plan (`plan.StackPlan`, which builds on this
    module, so it is not imported here): every kind's changes and the prices."""

    @property
    def changes(self) -> Mapping[str, tuple[Change, ...]]: ...
    @property
    def prices(self) -> PriceTable: ...
    @property
    def project(self) -> str | None: ...
    @property
    def refreshed(self) -> bool:
        """The preview ran with `--refresh` (the live counts are as of `state_time`)."""
        ...

    @property
    def state_time(self) -> str | None: ...


class KindPreview(Protocol):
    """A kind's part of the PR comment: what is its own (how it is priced, which columns its
    table shows, what losing one takes away); its costs are per hour or per month (`per_hour`).

    Implemented by a class of the kind's package's `preview` module, which the kind's
    `PreviewExtension` builds (`cluster.preview.ClusterPreview`).
    """

    plural: str
    """What the comment calls several of them (`clusters`, `shared volumes`)."""
    per_hour: bool
    """Its costs are USD per hour (else per month): the hourly guardrail counts only these."""

    def change(
        self, name: str, steps: Sequence[dict[str, Any]], prices: PriceTable, where: str
    ) -> Change:
        """One resource's steps (as `pulumi preview --json` prints them) merged into one change."""
        ...

    def table(
        self, shown: Sequence[Any], plan: StackPlan, destructive: frozenset[Any]
    ) -> list[str]:
        """Its table and what follows it, over the `shown` changes (the totals over all)."""
        ...

    def loss(self, change: Any) -> str:
        """What replacing or deleting it takes away."""
        ...

    def callouts(
        self, shown: Sequence[Any], others: Sequence[Any], gone: frozenset[Any], plan: StackPlan
    ) -> list[str]:
        """Notes on what the other kinds' `gone` changes leave behind of it or take with them."""
        ...

    def notes(self, changes: Sequence[Any], plan: StackPlan) -> list[str]:
        """Its lines in the comment's footnotes (prices and what they assume)."""
        ...


def preview_of(kind: Kind) -> KindPreview:
    """The kind's PR-comment reader and renderer, imported on first use (its `PreviewExtension`)."""
    declared = kind[PreviewExtension]
    preview: KindPreview = declared.preview(kind)
    return preview


def attached_props(kind: Kind, inputs: Mapping[str, Any]) -> dict[str, dict[str, str]]:
    """What `kind`'s `inputs` say of each resource it attaches: by the attached kind's config key
    (`volumes`), each property of that resource an `Attach` set one of these inputs from (its
    output or input name, `volume_id`) -> the value, when known. The attached kind's own preview
    reads the property that is its id."""
    found: dict[str, dict[str, str]] = {}
    for attach in kind[StackConfigExtension].attaches:
        for prop, source in attach.props.items():
            value = inputs.get(prop)
            if isinstance(value, str) and value != UNKNOWN:
                found.setdefault(attach.target, {})[source] = value
    return found
