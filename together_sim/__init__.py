"""A local Together GPU clusters API, for tests and demos without an account.

Run ``python -m together_sim --help``. It serves the real
paths under ``/v1`` (``/compute/clusters``, ``/compute/clusters/{id}``,
``/compute/regions``, ``/compute/clusters/storage/volumes[/{id}]``) and ``/v3/whoami``
with the JSON shapes of :mod:`together_api.wire` (checked against Together's own SDK),
keeps its state in SQLite under ``--state-dir`` and models time with a
virtual clock that tests move explicitly through ``POST /_sim/clock/advance``.

Modules, by object: ``clusters`` (a cluster's state, create/update validation, wire JSON),
``volumes`` (shared volumes and their binding); around them ``catalogue`` (regions, drivers,
capacity), ``model`` (the world: pure lifecycle over the virtual clock),
``requests`` (how bodies are read: known fields typed, unknown ones ignored),
``errors``, ``store`` (SQLite), ``faults`` (injected faults, request log), ``runtime``
(ties them together), ``app`` (the ``/v1`` handlers and ``create_app``), ``admin`` (the
``/_sim`` handlers), ``web`` (what both share),
``__main__`` (CLI). The simulator imports nothing from the provider except
the wire schema.
"""

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
