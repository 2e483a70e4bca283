"""What mutmut never mutates in a module, said per module so a kill rate is read with it (issue
51): a decorated function (a `@property`, a `@cached_property`, ...: mutmut 3 skips them,
`@staticmethod` and `@classmethod` aside), and a statement outside any function (a module
constant, a class attribute, a dataclass field's default). `mutate/constants.py` mutates the
module constants that hold short literals itself; the module constants it made no mutant of are
listed here (class attributes and dataclass defaults are not listed). Pure: reads source text."""

from __future__ import annotations

import ast
from collections.abc import Collection
from dataclasses import dataclass
from typing import Final

__all__ = ["Unreached", "constants", "unreached"]

MUTMUT_DECORATORS: Final = frozenset({"staticmethod", "classmethod"})
"""The only decorators under which mutmut still mutates a function."""


@dataclass(frozen=True)
class Unreached:
    """A module's parts mutmut does not mutate: each decorated function with its decorator and
    its statements, and each module-level name bound to a value."""

    decorated: tuple[tuple[str, str, int], ...]
    """(`Class.method` or `function`, the decorator, statements in its body)."""
    constants: tuple[str, ...]
    """Module-level names bound outside any function (`__all__` aside) that no constant mutant
    changed."""

    def words(self) -> str:
        parts = []
        if self.decorated:
            parts.append(
                "decorated: "
                + ", ".join(f"@{d} {name} ({n} stmt)" for name, d, n in self.decorated)
            )
        if self.constants:
            parts.append("module constants: " + ", ".join(self.constants))
        return "; ".join(parts) or "nothing"


def _decorator(node: ast.expr) -> str:
    return ast.unparse(node.func if isinstance(node, ast.Call) else node)


def _statements(function: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    body = function.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    return sum(1 for node in body for _ in ast.walk(node) if isinstance(_, ast.stmt))


def _functions(
    body: list[ast.stmt], prefix: str = ""
) -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    found: list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]] = []
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found.append((f"{prefix}{node.name}", node))
        elif isinstance(node, ast.ClassDef):
            found += _functions(node.body, f"{prefix}{node.name}.")
    return found


def constants(tree: ast.Module) -> list[str]:
    """The module-level names bound by an assignment (`__all__` and type aliases' targets too)."""
    names: list[str] = []
    for node in tree.body:
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets = [node.target]
        names += [t.id for t in targets if isinstance(t, ast.Name) and t.id != "__all__"]
    return names


def unreached(source: str, mutated: Collection[str] = ()) -> Unreached:
    """`mutated`: the module constants `mutate/constants.py` made mutants of in this run (none
    with `--no-constants`), left out of the list."""
    tree = ast.parse(source)
    decorated = tuple(
        (name, _decorator(function.decorator_list[0]), _statements(function))
        for name, function in _functions(tree.body)
        if function.decorator_list
        and _statements(function)  # a stub (`...`, a Protocol's) holds nothing to mutate
        and not (
            len(function.decorator_list) == 1
            and _decorator(function.decorator_list[0]) in MUTMUT_DECORATORS
        )
    )
    return Unreached(decorated, tuple(n for n in constants(tree) if n not in mutated))
