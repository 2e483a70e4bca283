"""What mutmut cannot mutate (`mutate/unreached.py`) holds no logic of the verdict or the plan:
their derived facts are plain functions that mutmut does mutate, and each `@property` of
verdict.py and preview/plan.py only names one (issue 51)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from mutate.constants import constant_mutants
from mutate.modules import by_key
from mutate.unreached import unreached

ROOT = Path(__file__).resolve().parents[2]


def _no_logic(node: ast.expr) -> bool:
    """A call, an attribute or a lookup: what a property may return without holding logic."""
    if isinstance(node, ast.Call):
        return all(isinstance(a, ast.Name | ast.Attribute) for a in node.args)
    if isinstance(node, ast.Subscript):
        return isinstance(node.value, ast.Name) and isinstance(node.slice, ast.Attribute)
    return isinstance(node, ast.Attribute)


@pytest.mark.parametrize("key", ["verdict", "plan"])
def test_each_property_of_the_verdict_and_the_plan_only_names_a_function(key: str) -> None:
    source = (ROOT / by_key(key).path).read_text(encoding="utf-8")
    properties = [
        node
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef)
        and any(ast.unparse(d) == "property" for d in node.decorator_list)
    ]
    assert properties
    for prop in properties:
        body = [s for s in prop.body if not isinstance(s, ast.Expr)]  # a docstring aside
        assert len(body) == 1 and isinstance(body[0], ast.Return), prop.name
        assert body[0].value is not None and _no_logic(body[0].value), ast.unparse(body[0])


def test_unreached_names_decorated_functions_and_module_constants() -> None:
    source = '''
LIMIT: Final = 3
NAMES = ("a", "b")
__all__ = ["f"]

class C:
    @property
    def p(self) -> int:
        """Why."""
        if self.x:
            return 1
        return 2

    @staticmethod
    def s() -> int:
        return 1

class P(Protocol):
    @property
    def stub(self) -> int: ...

@functools.cache
def f() -> int:
    return LIMIT
'''
    found = unreached(source)
    assert found.decorated == (("C.p", "property", 3), ("f", "functools.cache", 1))
    assert found.constants == ("LIMIT", "NAMES")
    assert found.words() == (
        "decorated: @property C.p (3 stmt), @functools.cache f (1 stmt); module constants: "
        "LIMIT, NAMES"
    )


def test_the_constants_mutated_in_a_run_are_not_reported_as_not_mutated() -> None:
    """What the report prints as not mutated leaves out what `mutate/constants.py` mutated."""
    source = 'LIMIT = 3\nT = TypeVar("T")\nFIX = f"{LIMIT} left"\n'
    mutated = {m.constant for m in constant_mutants(source, "m")}
    assert mutated == {"LIMIT"}
    assert unreached(source, mutated).constants == ("T", "FIX")
    assert unreached(source).constants == ("LIMIT", "T", "FIX")  # a run without constants


def test_constants_get_mutmuts_number_and_string_mutants_prose_and_type_names_aside() -> None:
    source = """from typing import Final, TypeVar
T = TypeVar("T")
SLACK: Final = 1.0
SUFFIXES: Final = (".tmp", "~")
FIX = "a sentence long enough to be prose rather than a name or a key"
__all__ = ["SLACK"]

def f() -> float:
    return 2.0
"""
    made = constant_mutants(source, "m")
    assert [(m.name, m.after) for m in made] == [
        ("m.SLACK__const_1", "SLACK: Final = 2.0"),
        ("m.SUFFIXES__const_1", 'SUFFIXES: Final = ("XX.tmpXX", "~")'),
        ("m.SUFFIXES__const_2", 'SUFFIXES: Final = (".TMP", "~")'),
        ("m.SUFFIXES__const_3", 'SUFFIXES: Final = (".tmp", "XX~XX")'),
    ]
    assert made[0].line == 3 and made[0].before == "SLACK: Final = 1.0"
    assert "return 2.0" in made[0].source and "SLACK: Final = 2.0" in made[0].source


def test_a_sentence_split_over_lines_is_prose_as_a_whole() -> None:
    source = 'FIX = ("handle SIGTERM: checkpoint and exit 143 within the grace "\n    "period")\n'
    assert constant_mutants(source, "m") == []
