"""Fixtures for the conformance tests: one simulator per test module, its clock frozen."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from testkit.sim import SimulatorProcess


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SimulatorProcess]:
    with SimulatorProcess(tmp_path_factory.mktemp("sim"), time_scale=0) as process:
        yield process
