"""Shared fixtures: the simulator subprocess and the isolated real-engine environment."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from testkit.kube import kube_bin_or_skip
from testkit.langhost import missing_extras_reason
from testkit.pulumi_env import PulumiEnv, engine_bin, native_pulumi_env
from testkit.sim import SimulatorProcess

# A shared assertion helper's failure shows the values it compared, as a test's own assert does.
pytest.register_assert_rewrite("tests.kube_helpers")


@pytest.fixture
def simulator(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SimulatorProcess]:
    """A fresh simulator subprocess (admin on, own state dir), stopped after the test.

    Options such as ``{"time_scale": 60}`` come from indirect parametrisation; with
    ``"kubernetes": True`` it gets the built control plane (or the test skips with the fix).
    """
    options = getattr(request, "param", None) or {}
    if options.get("kubernetes") and "kube_bin" not in options:
        options = {**options, "kube_bin": kube_bin_or_skip()}
    with SimulatorProcess(tmp_path / "simulator-state", **options) as sim:
        yield sim


@pytest.fixture(scope="session")
def engine() -> Path:
    """The built Pulumi engine's bin directory (fails with the fix when it is missing)."""
    return engine_bin()


@pytest.fixture
def pulumi_env(tmp_path: Path, engine: Path) -> PulumiEnv:
    """A fresh PULUMI_HOME and file backend under the test's tmp_path."""
    return PulumiEnv(root=tmp_path, bin_dir=engine)


@pytest.fixture
def native_env(tmp_path: Path, engine: Path) -> PulumiEnv:
    """Like `pulumi_env`, with the native plugin (`pulumi-resource-together`) on PATH."""
    return native_pulumi_env(tmp_path, engine)


@pytest.fixture(autouse=True)
def _langhost_extras(request: pytest.FixtureRequest) -> None:
    """Skip a test marked `langhost_extras(...)` when the engine's Python host lacks one of them
    (upstream's host, from a release Pulumi first on PATH: see testkit/langhost.py). Autouse, so
    it runs before the test's other fixtures start anything."""
    marker = request.node.get_closest_marker("langhost_extras")
    if marker is None:
        return
    reason = missing_extras_reason(request.getfixturevalue("engine"), tuple(marker.args))
    if reason is not None:
        pytest.skip(reason)
