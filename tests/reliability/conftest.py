"""Fixtures for the reliability tests: the same isolated Pulumi environment as tests/integration."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.pulumi_env import PulumiEnv, engine_bin


@pytest.fixture(scope="session")
def engine() -> Path:
    return engine_bin()


@pytest.fixture
def pulumi_env(tmp_path: Path, engine: Path) -> PulumiEnv:
    return PulumiEnv(root=tmp_path, bin_dir=engine)
