"""Every resource kind this project manages, once, so that adding a kind is one line here and the
docs, exports, both hosts, stack config, the PR preview and the tests pick it up by looping."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any, Final

# Pure: importing the registry loads each kind's field table and rules only, never Pulumi or
# httpx (the lifecycles and the provider classes load on first use).
from together_provider.cluster import KIND as CLUSTER
from together_provider.framework.kind import Kind
from together_provider.volume import KIND as VOLUME

__all__ = [
    "BY_NAME",
    "BY_TOKEN",
    "BY_TYPE",
    "CLUSTER",
    "EXPORTS",
    "KINDS",
    "VOLUME",
    "lazy_classes",
]

KINDS: Final[tuple[Kind, ...]] = (CLUSTER, VOLUME)

BY_NAME: Final[Mapping[str, Kind]] = {kind.type_name: kind for kind in KINDS}
"""By type name (`Cluster`): how the generated classes name their kind."""

BY_TOKEN: Final[Mapping[str, Kind]] = {kind.token: kind for kind in KINDS}
"""By native token (`together:index:Cluster`): how the native plugin finds a request's kind."""

BY_TYPE: Final[Mapping[str, Kind]] = {kind.dynamic_type: kind for kind in KINDS}
"""By dynamic type (`pulumi-python:dynamic/together:Cluster`): how a preview reads a step."""

EXPORTS: Final = frozenset(name for kind in KINDS for name in kind.exports)
"""Each kind's exported class names (`Cluster`, `ClusterArgs`, ...), in both hosts' packages."""


def lazy_classes(package: str, resources: str | None = None) -> Callable[[str], Any]:
    """A package's PEP 562 `__getattr__` giving `EXPORTS` from its generated `resources` module
    (`<package>.resources` unless named) on first use, so importing the package stays
    Pulumi-free."""
    module = resources or f"{package}.resources"

    def load(name: str) -> Any:
        if name not in EXPORTS:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module), name)

    return load


_BY_PROVIDER: Final[Mapping[str, Kind]] = {kind.provider_name: kind for kind in KINDS}


def __getattr__(name: str) -> Any:
    """`<type_name>Provider`, each kind's dynamic provider class, derived on first use (PEP 562)
    so that importing the registry stays Pulumi-free.

    Pulumi state pickles a dynamic provider by module and class name, so state written now names
    `together_provider.registry.ClusterProvider`, and that name must always resolve; older names
    are kept by one line each (`together_provider.provider`, `volume_provider`,
    `cluster.provider`, `volume.provider`)."""
    kind = _BY_PROVIDER.get(name)
    if kind is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from together_provider.dynamic.provider import provider_class

    return provider_class(kind, home=__name__)
