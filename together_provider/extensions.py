"""What a kind may declare for each feature that loops over the registry, one extension type per
feature and named after it; the feature reads `kind[ItsExtension]`, and the core `Kind` holds them
without knowing them. Pure: no Pulumi, no registry."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from together_provider.framework.kind import Kind

__all__ = [
    "ID",
    "Attach",
    "ExportsExtension",
    "NativeExtension",
    "PreviewExtension",
    "ProgramExtension",
    "StackConfigExtension",
    "StackExport",
    "config_key",
]


@dataclass(frozen=True)
class Attach:
    """A stack-config setting naming a resource of another kind by its key (a cluster's
    `volume: <key>`): it fills `props` from that resource, so the engine orders the two."""

    key: str
    """The setting (`volume`)."""
    target: str
    """The attached kind's config key (`volumes`)."""
    props: Mapping[str, str]
    """This kind's property -> the attached resource's output or input it is set from
    (`volume_id` <- `volume_id`, `volume_region` <- `region`). An input is known before the
    attached resource exists, so stack config checks it at once; an output is not."""
    checked: str
    """The property whose rule failure stack config words as the attachment's problem."""
    against: str
    """The own property `checked` must equal (`region`)."""


@dataclass(frozen=True)
class StackConfigExtension:
    """The kind in the stack's config (`stack_config.py`; the stack program `__main__.py` and the
    PR preview key their resources by it too)."""

    key: str
    """The stack config's map of these resources (`clusters`)."""
    required: str | None = None
    """Stack config must declare at least one: the example its error shows
    (`clusters.train.numGpus 8`); None: optional."""
    defaults: frozenset[str] | None = None
    """The properties it takes from stack config's `defaults` when it does not set them;
    None: every default (the `defaults` keys are the union of what the kinds take)."""
    attaches: tuple[Attach, ...] = ()
    """Its settings that attach a resource of another kind."""


def config_key(kind: Kind) -> str:
    """The kind's map in the stack config (`clusters`): how stack config, the stack program and
    the PR preview key its resources."""
    return kind[StackConfigExtension].key


@dataclass(frozen=True)
class StackExport:
    """One `pulumi.export` of the stack program per resource of a kind: `key` is formatted
    with the resource's `name`, `value` reads the resource's outputs."""

    key: str
    value: Callable[[Any], Any]
    secret: bool = False


@dataclass(frozen=True)
class ExportsExtension:
    """What the stack program (`__main__.py`) exports for each of the kind's resources."""

    exports: tuple[StackExport, ...]


@dataclass(frozen=True)
class PreviewExtension:
    """The kind's part of the PR comment (`together_provider.preview`): `preview` builds, for the
    kind, the object that reads and renders its changes (a `preview_parts.kinds.KindPreview`, as the
    kind's own function declares: the type checker holds it there), importing it on first call.
    A kind without one shows none of its changes there (they still count in the engine's change
    summary)."""

    preview: Callable[[Kind], Any]


ID: Final = "id"
"""A `ProgramExtension.known_at_preview` source: the resource's own id."""


@dataclass(frozen=True)
class ProgramExtension:
    """What both hosts' resources know in the program before the API answers: set by
    `dynamic/resource.py` and typed on the generated classes (`codegen.py`)."""

    flags: Mapping[str, str] = field(default_factory=dict)
    """Booleans of the program's resource and Args: name -> the input whose being set makes it
    true (`has_volume`: `volume_id`), known when the program runs even while the value is not."""
    known_at_preview: Mapping[str, str] = field(default_factory=dict)
    """Outputs both hosts' resources set in the program, so they are known at preview: output ->
    `ID` (the resource's id) or the input it always equals."""


@dataclass(frozen=True)
class NativeExtension:
    """The kind in the native plugin's package schema (`hosts/native/package_schema.py`)."""

    notes: str
    """Said after the table's docstring in the resource's description."""
