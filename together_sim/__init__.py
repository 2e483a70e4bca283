"""A local Together GPU clusters API, so tests and demos run without an account or a bill. It
imports only ``together_api`` (the wire schema it answers with). Running it: docs/simulator.md;
its modules: CONTRIBUTING.md "Where things live"."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from together_sim.app import create_app
    from together_sim.runtime import SimulatorConfig
    from together_sim.timings import Timings

__all__ = ["SimulatorConfig", "Timings", "create_app"]

_HOMES = {
    "create_app": "together_sim.app",
    "Timings": "together_sim.timings",
    "SimulatorConfig": "together_sim.runtime",
}


def __getattr__(name: str) -> Any:
    """Lazy exports, so `python -m together_sim` can explain a missing extra before Starlette
    is imported."""
    if name not in _HOMES:
        raise AttributeError(f"module 'together_sim' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(_HOMES[name]), name)
