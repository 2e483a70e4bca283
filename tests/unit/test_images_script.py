"""tools/images/build.sh's cache key covers what the images are built from in the repository:
the autoscaler's Dockerfile, pins, version and packages, the pause source, and the worker
library's distribution worker/ and the script that builds its wheel (bytecode aside)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.test_engine_script import copy_tools, key_of


@pytest.fixture
def tools(tmp_path: Path) -> Path:
    return copy_tools(tmp_path / "repo" / "tools")


def script_of(tools: Path) -> Path:
    return tools / "images" / "build.sh"


@pytest.mark.parametrize(
    "changed",
    [
        "Dockerfile.autoscaler",
        "constraints.txt",
        "pyproject.toml",
        "together_api/client.py",
        "together_facts/prices.json",
        "together_autoscaler/controller.py",
        "tools/images/pause/main.go",
        "worker/pyproject.toml",
        "worker/together_worker/launcher.py",
        "scripts/worker-wheel.sh",
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


def test_a_new_worker_module_keys_the_images_and_its_bytecode_does_not(
    tools: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    before = key_of(script_of(tools), cache)
    package = tools.parent / "worker" / "together_worker"
    (package / "extra.py").write_text("STEP = 1\n")
    added = key_of(script_of(tools), cache)
    assert added != before
    (package / "__pycache__").mkdir(exist_ok=True)
    (package / "__pycache__" / "extra.cpython-311.pyc").write_bytes(b"\0")
    egg_info = tools.parent / "worker" / "together_gpu_clusters_worker.egg-info"
    egg_info.mkdir()
    (egg_info / "PKG-INFO").write_text("Name: x\n")
    assert key_of(script_of(tools), cache) == added, "bytecode or build metadata rebuilds images"
