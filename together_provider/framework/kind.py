"""The core of a resource kind: its table, rules, lifecycle, type name and docs. Each feature that
loops over the registry reads its own extension of a kind (`kind[Extension]`); the framework knows
none of them, so a new feature edits no file here."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, TypeVar

from together_provider.framework.rulebook import Rulebook
from together_provider.framework.schema import Schema

if TYPE_CHECKING:
    from together_provider.framework.lifecycle import LifecycleType

__all__ = ["PACKAGE", "Kind"]

PACKAGE: Final = "together"
"""The Pulumi package (and dynamic-type module) every kind is published under."""

E = TypeVar("E")


@dataclass(frozen=True, eq=False)
class Kind:
    """One resource kind. `type_name` is its Pulumi type name (`Cluster`): the native token
    `together:index:<type_name>`, the dynamic type `pulumi-python:dynamic/together:<type_name>`,
    the exported classes `<type_name>` and `<type_name>Args` (generated into
    `together_provider.resources` and `.hosts.native.resources`) and the dynamic provider
    `together_provider.registry.<type_name>Provider` all follow from it.

    What a feature needs beyond the core is an extension the kind declares (`extensions`), of a
    type the feature owns (`together_provider.extensions`); the feature asks `kind[ItsType]`
    or `kind.get(ItsType)`, like a Go interface check, and the framework never names it.

    Every part is an object the kind's module imports, so the type checker and the import graph
    see each link; none is named by a string. Cheap to import: its field table and rules are
    pure, and its lifecycle (httpx, pydantic) comes from a function of the kind's that imports it
    on first call, so a preview loads neither."""

    type_name: str
    package: str
    """The kind's subpackage (`together_provider.cluster`): where its declaration lives."""
    schema: Schema[Any]
    rulebook: Rulebook[Any]
    lifecycle: Callable[[], LifecycleType]
    """Its lifecycle class (it fits `framework.lifecycle.Lifecycle`), imported on the first call:
    it loads httpx and pydantic, so only apply paths call it."""
    docs_marker: str
    """Its generated tables' marker prefix (`<prefix>rules-table`, `<prefix>fields-table`)."""
    doc: str
    """What the resource is and what a change does: the generated Args' and classes' docstring."""
    extensions: tuple[object, ...] = field(default=(), kw_only=True)
    """What each feature reads of it, one object per feature's extension type."""

    def __post_init__(self) -> None:
        types = [type(extension) for extension in self.extensions]
        if len(set(types)) != len(types):
            raise TypeError(f"{self.type_name}: one extension per type, got {types}")

    def get(self, of: type[E]) -> E | None:
        """Its extension of type `of`, or None when the kind declares none."""
        return next((e for e in self.extensions if isinstance(e, of)), None)

    def __getitem__(self, of: type[E]) -> E:
        """Its extension of type `of`, which the asking feature needs."""
        found = self.get(of)
        if found is None:
            raise LookupError(
                f"{self.type_name} declares no {of.__name__}: add one to its Kind's extensions "
                f"({self.package}/__init__.py)"
            )
        return found

    @property
    def token(self) -> str:
        """The native plugin's resource token."""
        return f"{PACKAGE}:index:{self.type_name}"

    @property
    def dynamic_type(self) -> str:
        """The dynamic resource's type in the state and in `pulumi preview --json`."""
        return f"pulumi-python:dynamic/{PACKAGE}:{self.type_name}"

    @property
    def exports(self) -> tuple[str, str]:
        """The names `together_provider` exports for it: the resource and its args."""
        return self.type_name, f"{self.type_name}Args"

    @property
    def named_after_resource(self) -> str:
        """The input that defaults to the resource's name in the program."""
        return next(f.name for f in self.schema.inputs if f.names_resource)

    @property
    def provider_name(self) -> str:
        """Its dynamic provider's class name, under `together_provider.registry` (pickled)."""
        return f"{self.type_name}Provider"
