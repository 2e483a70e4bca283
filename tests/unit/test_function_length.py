"""No function of the product is over 80 lines (issue 52): a longer one is several steps that
want names of their own. The parsers built from a table are short by construction."""

from __future__ import annotations

import ast

from testkit.layout import package_dir

MAX_LINES = 80
PRODUCT = (
    "together_facts",
    "together_api",
    "together_provider",
    "together_sim",
    "together_policy",
    "together_autoscaler",
    "together_drill",
    "together_worker",
    "examples",
    "__main__.py",
)
"""What users install or copy (pyproject's packages, the worker library, the examples, the stack
program); tools, tests, benchmarks and the mutation harness aside."""


def long_functions(source: str, limit: int = MAX_LINES) -> list[tuple[str, int]]:
    """Each function or method of ``source`` over ``limit`` lines (decorators aside), by name."""
    return [
        (node.name, node.end_lineno - node.lineno + 1)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > limit
    ]


def test_no_product_function_is_over_80_lines() -> None:
    found: dict[str, list[tuple[str, int]]] = {}
    for name in PRODUCT:
        path = package_dir(name)
        for module in sorted(path.rglob("*.py")) if path.is_dir() else [path]:
            if long := long_functions(module.read_text()):
                found[str(module)] = long
    assert found == {}


def test_the_scan_counts_a_function_over_the_limit_and_not_one_at_it() -> None:
    at_limit = "def f():\n" + "    x = 1\n" * 2
    over = "async def g():\n" + "    x = 1\n" * 3
    assert long_functions(at_limit + over, limit=3) == [("g", 4)]
