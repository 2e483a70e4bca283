"""The one Pulumi-free contract both hosts drive, so a decision made in a lifecycle behaves the
same whichever host (`dynamic.provider` or `hosts.native.provider`) runs it; and what every
resource's lifecycle shares."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Final, Protocol, TypeVar

from together_facts.errors import NotFoundError, SpecError
from together_provider.framework.rulebook import Rulebook
from together_provider.framework.schema import Stored, Unknown

if TYPE_CHECKING:  # a preview (check and diff) must not load httpx or pydantic
    from together_api.client import TogetherClient

__all__ = [
    "DELETE_TIMEOUT_SECONDS",
    "Applied",
    "Lifecycle",
    "Observed",
    "ResourceLifecycle",
    "Say",
    "Stored",
    "silent",
]

DELETE_TIMEOUT_SECONDS: Final = 1800.0
"""How long `delete` waits for Together to answer 404 when the host gives no timeout."""

Say = Callable[[str], None]
"""A progress callback: one human-readable line per step."""

Spec = TypeVar("Spec", contravariant=True)
Live = TypeVar("Live")


class _Deletable(Protocol):
    @property
    def is_deleting(self) -> bool: ...


Found = TypeVar("Found", bound=_Deletable)


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


class Lifecycle(Protocol[Spec]):
    """What a host drives: `ClusterLifecycle` and `VolumeLifecycle` both fit.

    A lifecycle creates, adopts, updates, reads and deletes one kind of Together object. It is
    built as `Lifecycle(client, say)` (`LifecycleType`): `client` is a `TogetherClient` the caller
    owns (and closes); `say(message)` hears one progress line per step (default: `silent`).
    Check and diff are not the lifecycle's: a host answers them from its kind's `Rulebook` (no
    client, no API call).

    A host crosses in once per call, with typed values it parsed once; the lifecycle parses
    nothing again and asks the rules through its `RULEBOOK` only. `outputs` in every answer echo
    each input beside the computed fields, ints as ints; which outputs are secret is the field
    table's word (`Schema.secret_outputs`). `timeout_seconds` bounds the wait (a native host
    passes Pulumi's customTimeouts). Errors descend from `together_facts.errors.TogetherError`; a
    bad spec is a `SpecError` naming the resource, the field and the fix."""

    def create(self, spec: Spec, *, timeout_seconds: float | None = None) -> Applied:
        """Create (or adopt) the object `spec` describes: the resolved spec of the kind's table
        (`Schema.resolve`, which raised `SpecError` for a bad or still-unknown input). Without
        `timeout_seconds`, the input `ready_timeout_seconds` bounds the wait."""
        ...

    def update(
        self, id_: str, old: Stored[Any], new: Spec, *, timeout_seconds: float | None = None
    ) -> Applied:
        """Change the live object `id_` from its recorded state `old` (`Schema.stored`: the
        previous outputs as a draft plus the last known computed outputs) to the resolved spec
        `new`."""
        ...

    def read(self, id_: str, stored: Stored[Any]) -> Observed | None:
        """The live object (None: it is gone). `stored` is the recorded state (`Schema.stored`):
        a refresh echoes its `recorded` inputs with what Together reports read back; an import
        has none, and every input Together reports is read."""
        ...

    def delete(
        self, id_: str, stored: Stored[Any], *, timeout_seconds: float | None = None
    ) -> None:
        """Delete the object and wait until it is gone; `stored` as for `read`. The wait is
        bounded alike on every kind (`ResourceLifecycle.delete_timeout`)."""
        ...


LifecycleType = Callable[["TogetherClient", Say], Lifecycle[Any]]
"""A lifecycle class: called with a client and a `Say`."""


class ResourceLifecycle:
    """What every resource's lifecycle shares: a caller-owned client, progress, and the one way
    it asks the resource's rules (`RULEBOOK`: adoption's refusals, an update's plan)."""

    RULEBOOK: ClassVar[Rulebook[Any]]

    def __init__(self, client: TogetherClient, say: Say = silent) -> None:
        self._client = client
        self._say = say

    @staticmethod
    def delete_timeout(stored: Stored[Any], timeout_seconds: float | None) -> float:
        """How long a delete waits: the host's timeout (a native host passes Pulumi's
        customTimeouts), else the recorded `ready_timeout_seconds`, else
        `DELETE_TIMEOUT_SECONDS`. Every kind's delete asks this one place, so none disagrees."""
        if timeout_seconds is not None:
            return timeout_seconds
        recorded = getattr(stored.inputs, "ready_timeout_seconds", Unknown.VALUE)
        if isinstance(recorded, int | float):
            return float(recorded)
        return DELETE_TIMEOUT_SECONDS

    @staticmethod
    def _still_there(fetch: Callable[[str], Found], object_id: str) -> Found | None:
        """What ``fetch`` reads of the object, or None when it is gone: 404, or being deleted. A
        read of any kind treats a deleting object as gone, so a refresh drops it the same way."""
        try:
            found = fetch(object_id)
        except NotFoundError:
            return None
        return None if found.is_deleting else found

    def _to_adopt(
        self, spec: Any, object_id: str, fetch: Callable[[str], Live], listing: str
    ) -> Live:
        """The live object `adopt_<noun>_id` names (`fetch` reads it), refused unless its
        immutable fields match the spec: adoption must never quietly take over another object.
        `listing` is the command that lists the ids a user may adopt."""
        noun, name = self.RULEBOOK.schema.noun, getattr(spec, self.RULEBOOK.name_field)
        field = f"adopt_{noun}_id"
        try:
            live = fetch(object_id)
        except NotFoundError as missing:
            raise SpecError(
                f"{noun} {name!r}: {field}={object_id!r} does not exist",
                field=field,
                fix=f"use an id from `{listing}`, or remove {field} to create",
            ) from missing
        mismatches = self.RULEBOOK.schema.identity_mismatches(spec, live)
        if mismatches:
            raise SpecError(
                f"{noun} {name!r}: cannot adopt {object_id}, its immutable fields differ from "
                f"the spec ({'; '.join(mismatches)})",
                field=field,
                fix=f"make the spec match the existing {noun}, then change it in a later update",
            )
        return live
