"""The string literals of our Python code, read from its syntax tree: what the docs tests check
quotes and names against (tests/unit/test_troubleshooting.py, tests/unit/test_named_symbols.py).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

__all__ = ["Literal", "string_literals"]

Literal = tuple[str, ...]
"""A string literal as the texts around its fields: `f"a{x}b"` is ("a", "b"), "ab" is ("ab",)."""


def string_literals(source: Path, *, docstrings: bool) -> Iterator[Literal]:
    """Every string literal of a module, an f-string as one `Literal`. Without `docstrings`, a
    string that is a statement of its own (a docstring) is left out: it is prose about the code,
    not something the code prints."""
    tree = ast.parse(source.read_text(), str(source))
    prose = (
        set() if docstrings else {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)}
    )
    parts = {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values}
    for node in ast.walk(tree):
        if id(node) in prose or id(node) in parts:
            continue
        if isinstance(node, ast.JoinedStr):
            texts = [""]
            for value in node.values:
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    texts[-1] += value.value
                else:
                    texts.append("")
            yield tuple(texts)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield (node.value,)
