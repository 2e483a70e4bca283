"""What every resource's lifecycle shares, and the one contract both hosts drive.

A lifecycle (`cluster.lifecycle.ClusterLifecycle`, `volume.lifecycle.VolumeLifecycle`) creates,
adopts, updates, reads and deletes one kind of Together object over a caller-owned client, free
of Pulumi. The dynamic host (`framework.dynamic`) and the native plugin (`native.provider`) are
thin translators over `Lifecycle`, so a decision made here behaves the same whichever host runs it.

The contract:

- `Lifecycle(client, say)`: `client` is a `TogetherClient` the caller owns (and closes);
  `say(message)` hears one progress line per step (default: silent). `check` and `diff` are
  class methods: they ask the kind's `Rulebook`, need no client and make no API call.
- Properties are plain dicts keyed by the table's snake_case field names. Inputs may hold floats
  for whole numbers (`8.0`, as Pulumi's wire sends them); everything returned holds ints as ints.
  Keys starting with `__` (host bookkeeping) are ignored. Only `check` and `diff` may receive a
  value not known until apply.
- `create(inputs) -> Applied(id, outputs)`, `update(id, olds, news) -> Applied`,
  `read(id, props) -> Observed | None` (None: the object is gone), `delete(id, props)`.
  `outputs` echo every input beside the computed fields; which outputs are secret is the field
  table's word (`Schema.secret_outputs`), not the call's.
- `timeout_seconds` on create, update and delete bounds the wait (a native host passes Pulumi's
  customTimeouts); without it the input `ready_timeout_seconds` or `DELETE_TIMEOUT_SECONDS` does.
- Errors descend from `together_api.errors.TogetherError`; a bad spec is a `SpecError` naming
  the resource, the field and the fix.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Final, Protocol

from together_provider.framework.rulebook import Plan, Rulebook
from together_provider.framework.schema import Schema, without_host_keys

if TYPE_CHECKING:  # a preview (check and diff) must not load httpx or pydantic
    from together_api.client import TogetherClient

__all__ = [
    "DELETE_TIMEOUT_SECONDS",
    "Applied",
    "Lifecycle",
    "Observed",
    "Props",
    "ResourceLifecycle",
    "Say",
    "silent",
]

DELETE_TIMEOUT_SECONDS: Final = 1800.0
"""How long `delete` waits for Together to answer 404 when the host gives no timeout."""

Props = Mapping[str, Any]

Say = Callable[[str], None]
"""A progress callback: one human-readable line per step."""


def silent(_message: str) -> None:
    """The default `Say`: no progress lines."""
    return None


@dataclass(frozen=True)
class Applied:
    """A live object after create or update: its id and every output property."""

    id: str
    outputs: dict[str, Any]


@dataclass(frozen=True)
class Observed:
    """An object as read back: the live inputs (so drift shows) and the outputs."""

    id: str
    inputs: dict[str, Any]
    outputs: dict[str, Any]


class Lifecycle(Protocol):
    """What a host drives: `ClusterLifecycle` and `VolumeLifecycle` both fit."""

    def create(self, inputs: Props, *, timeout_seconds: float | None = None) -> Applied: ...
    def update(
        self, id_: str, olds: Props, news: Props, *, timeout_seconds: float | None = None
    ) -> Applied: ...
    def read(self, id_: str, props: Props) -> Observed | None: ...
    def delete(self, id_: str, props: Props, *, timeout_seconds: float | None = None) -> None: ...


LifecycleType = Callable[["TogetherClient", Say], Lifecycle]
"""A lifecycle class: called with a client and a `Say`."""


class ResourceLifecycle:
    """What every resource's lifecycle shares: a caller-owned client, progress, the update's plan
    (from the resource's `RULEBOOK`: hosts check and diff through the rulebook itself), and the
    outputs an update keeps."""

    RULEBOOK: ClassVar[Rulebook[Any]]

    def __init__(self, client: TogetherClient, say: Say = silent) -> None:
        self._client = client
        self._say = say

    @classmethod
    def diff(cls, olds: Props, news: Props) -> Plan:
        """What changing the previous outputs `olds` into the checked inputs `news` means."""
        return cls.RULEBOOK.plan(without_host_keys(olds), without_host_keys(news))

    @classmethod
    def kept_outputs(cls, olds: Props) -> dict[str, Any]:
        """The last known computed outputs in `olds`: what an update that asks Together nothing
        (or learns only part of the object) carries forward."""
        schema: Schema[Any] = cls.RULEBOOK.schema
        return {k: v for k, v in without_host_keys(olds).items() if k in schema.output_names}
