"""Fixtures for unit tests: the in-process simulator."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.sim_app import Sim


@pytest.fixture
def sim(tmp_path: Path) -> Iterator[Sim]:
    """A fresh in-process simulator with a frozen clock and its own state dir."""
    s = Sim(tmp_path / "state")
    yield s
    s.http.close()
