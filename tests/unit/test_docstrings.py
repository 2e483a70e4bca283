"""Module docstrings say in 1 to 3 lines why the module exists; what a class or function does is
said at it, so a long module docstring is a table of contents that goes stale."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MAX_LINES = 3
CHECKED = (
    "together_api",
    "together_autoscaler",
    "together_policy",
    "testkit",
    "together_sim",
    "together_provider/__init__.py",
    "together_provider/registry.py",
    "together_provider/codegen.py",
    "together_provider/provider.py",
    "together_provider/volume_provider.py",
    "together_provider/resources.py",
    "together_provider/native/__init__.py",
    "together_provider/native/_base.py",
    "together_provider/native/package_schema.py",
    "together_provider/native/_properties.py",
    "together_provider/native/resources.py",
    "together_provider/cluster/__init__.py",
    "together_provider/cluster/table.py",
    "together_provider/cluster/provider.py",
    "together_provider/volume/__init__.py",
    "together_provider/volume/table.py",
    "together_provider/volume/provider.py",
    "together_provider/framework/__init__.py",
    "together_provider/framework/kind.py",
    "together_provider/autoscaler.py",
    "together_provider/kubernetes.py",
    "together_provider/workloads.py",
    "together_provider/preview",
    "together_provider/cluster/preview.py",
    "together_provider/volume/preview.py",
    "together_provider/stack_config.py",
    "together_provider/docs.py",
    "together_provider/native/plugin.py",
    "together_provider/framework/fixes.py",
    "together_provider/framework/validators.py",
    "together_provider/framework/lifecycle.py",
    "together_provider/framework/rulebook.py",
    "together_provider/framework/schema.py",
    "together_provider/cluster/lifecycle.py",
    "together_provider/volume/rules.py",
    "together_provider/cluster/mapping.py",
    "together_provider/framework/fields.py",
    "together_provider/volume/lifecycle.py",
    "policy/__main__.py",
    "__main__.py",
)
"""Packages (every module) and single modules whose docstrings are held to `MAX_LINES`."""


def _modules() -> list[Path]:
    found: list[Path] = []
    for name in CHECKED:
        path = REPO / name
        found.extend(sorted(path.rglob("*.py")) if path.is_dir() else [path])
    return found


def docstring_lines(module: Path) -> int:
    """Lines of the module's docstring, blank ones included (0 when it has none)."""
    docstring = ast.get_docstring(ast.parse(module.read_text()))
    return len(docstring.strip().splitlines()) if docstring else 0


def test_the_checked_modules_exist() -> None:
    assert len(_modules()) >= len(CHECKED)
    assert all(module.exists() for module in _modules())


@pytest.mark.parametrize("module", _modules(), ids=lambda path: str(path.relative_to(REPO)))
def test_module_docstring_is_one_to_three_lines(module: Path) -> None:
    lines = docstring_lines(module)
    assert 1 <= lines <= MAX_LINES, (
        f"{module.relative_to(REPO)}: the module docstring has {lines} lines; say in 1 to "
        f"{MAX_LINES} why the module exists, and move the rest to the class or function it is about"
    )
