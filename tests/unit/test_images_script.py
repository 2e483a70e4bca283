"""tools/images/build.sh's cache key covers what the images are built from in the repository:
the autoscaler's Dockerfile, pins, version and packages, the pause source, and the worker
package together_worker/ from the moment it exists (its bytecode aside)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.unit.test_engine_script import copy_tools, key_of


@pytest.fixture
def tools(tmp_path: Path) -> Path:
    copied = copy_tools(tmp_path / "repo" / "tools")
    shutil.rmtree(copied.parent / "together_worker", ignore_errors=True)
    return copied


def script_of(tools: Path) -> Path:
    return tools / "images" / "build.sh"


@pytest.mark.parametrize(
    "changed",
    [
        "Dockerfile.autoscaler",
        "constraints.txt",
        "pyproject.toml",
        "together_api/client.py",
        "together_api/prices.json",
        "together_autoscaler/controller.py",
        "tools/images/pause/main.go",
    ],
)
def test_every_repository_input_keys_the_images(tools: Path, tmp_path: Path, changed: str) -> None:
    before = key_of(script_of(tools), tmp_path / "cache")
    path = tools.parent / changed
    path.write_text(path.read_text() + "\n")
    assert key_of(script_of(tools), tmp_path / "cache") != before, f"{changed} reuses old images"


def test_the_version_in_pyproject_names_the_build(tools: Path, tmp_path: Path) -> None:
    pyproject = tools.parent / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('version = "', 'version = "9', 1))
    assert "-autoscaler9" in key_of(script_of(tools), tmp_path / "cache")


def test_the_worker_package_keys_the_images_once_it_exists(tools: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    without = key_of(script_of(tools), cache)
    worker = tools.parent / "together_worker"
    worker.mkdir()
    (worker / "__init__.py").write_text('"""The worker."""\n')
    with_worker = key_of(script_of(tools), cache)
    assert with_worker != without
    (worker / "checkpoint.py").write_text("STEP = 1\n")
    changed = key_of(script_of(tools), cache)
    assert changed != with_worker
    (worker / "__pycache__").mkdir()
    (worker / "__pycache__" / "checkpoint.cpython-311.pyc").write_bytes(b"\0")
    assert key_of(script_of(tools), cache) == changed, "bytecode rebuilds the images"
