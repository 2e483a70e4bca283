"""What describes one resource kind: everything the hosts, docs, exports and features need.

A resource kind (a Cluster, a SharedVolume) is its own subpackage (`cluster/`, `volume/`) with
the same files, and one `Kind` in its `kind.py` naming them. The registry
`together_provider.registry.KINDS` lists every kind once; the docs generator, the lazy exports of
`together_provider`, the dynamic and native hosts, stack config, the PR preview and the tests
loop over it instead of naming kinds by hand.

A `Kind` is cheap to import: its field table and rules are pure, and what needs httpx, pydantic
or Pulumi (the lifecycle, the dynamic resource classes) is named by path and loaded on first use,
so a preview (check and diff) loads neither httpx nor pydantic.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from together_provider.framework.rulebook import Rulebook
from together_provider.framework.schema import Schema

if TYPE_CHECKING:
    from together_provider.framework.lifecycle import LifecycleType

__all__ = ["PACKAGE", "Kind"]

PACKAGE: Final = "together"
"""The Pulumi package (and dynamic-type module) every kind is published under."""


@dataclass(frozen=True)
class Kind:
    """One resource kind. `type_name` is its Pulumi type name (`Cluster`): the native token
    `together:index:<type_name>`, the dynamic type `pulumi-python:dynamic/together:<type_name>`,
    and the exported classes `<type_name>` and `<type_name>Args` of its `package`'s `resource`
    module all follow from it."""

    type_name: str
    package: str
    """The kind's subpackage (`together_provider.cluster`): `lifecycle`, `provider`, `resource`."""
    schema: Schema[Any]
    rulebook: Rulebook[Any]
    lifecycle_class: str
    """The class in `<package>.lifecycle` that fits `framework.lifecycle.Lifecycle`."""
    config_key: str
    """The stack config's map of these resources (`clusters`)."""
    docs_marker: str
    """Its generated tables' marker prefix (`<prefix>rules-table`, `<prefix>fields-table`)."""
    native_notes: str
    """Said after the table's docstring in the native package schema's description."""

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
    def description(self) -> str:
        return (self.schema.spec_type.__doc__ or "").strip() + " " + self.native_notes

    @property
    def named_after_resource(self) -> str:
        """The input that defaults to the resource's name in the program."""
        return next(f.name for f in self.schema.inputs if f.names_resource)

    def module(self, name: str) -> Any:
        """`<package>.<name>`, imported on first use (`lifecycle`, `provider`, `resource`)."""
        return importlib.import_module(f"{self.package}.{name}")

    def lifecycle(self) -> LifecycleType:
        """The lifecycle class; loads httpx and pydantic, so only apply paths call it."""
        lifecycle_type: LifecycleType = getattr(self.module("lifecycle"), self.lifecycle_class)
        return lifecycle_type
