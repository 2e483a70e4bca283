"""Shared fixtures. Keep this minimal: only the simulator lives here."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.sim import SimulatorProcess


@pytest.fixture
def simulator(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SimulatorProcess]:
    """A fresh simulator subprocess (admin on, own state dir), stopped after the test.

    Options such as ``{"time_scale": 60}`` come from indirect parametrisation.
    """
    options = getattr(request, "param", None) or {}
    with SimulatorProcess(tmp_path / "simulator-state", **options) as sim:
        yield sim
