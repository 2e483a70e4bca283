"""Module docstrings say in 1 to 3 lines why the module exists; what a class or function does is
said at it, so a long module docstring is a table of contents that goes stale."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from testkit.layout import package_dir

REPO = Path(__file__).resolve().parents[2]
MAX_LINES = 3
CHECKED = (
    "together_api",
    "together_autoscaler",
    "together_policy",
    "together_provider",
    "together_sim",
    "together_worker",
    "testkit",
    "policy/__main__.py",
    "__main__.py",
)
"""Every package of the product and the programs: every module is held to `MAX_LINES`."""


def _modules() -> list[Path]:
    found: list[Path] = []
    for name in CHECKED:
        path = package_dir(name)
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
