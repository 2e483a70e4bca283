"""The module constants mutmut never mutates (it mutates only inside functions), mutated with its
own operators: each number and each short string literal bound at module level (`GRACE_SLACK =
1.0`, `TEMPORARY_SUFFIXES = (".tmp", ...)`) gets mutmut's number and string mutants, one at a
time, in the module's copy, and the module's test files run on each (issue 51).

Strings longer than `MAX_STRING` (the pieces of one implicit concatenation counted together) are
prose (a fix, a message): a test that compares a whole sentence with the constant it is built
from cannot tell a mutant apart, so they are left out, and docs/benchmarks.md says so."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider
from mutmut.mutation.mutators import operator_number, operator_string

from mutate.modules import Module
from mutate.run import stop_leftovers

__all__ = ["MAX_STRING", "ConstantMutant", "constant_mutants", "judge_constants"]

MAX_STRING: Final = 40
"""Longer string constants are prose, not logic: not mutated."""
SKIPPED_CALLS: Final = frozenset({"TypeVar", "NewType", "ParamSpec"})
"""Calls whose string argument only names a type for the type checker."""
TIMEOUT_SECONDS: Final = 300


@dataclass(frozen=True)
class ConstantMutant:
    name: str
    """`<module>.<CONSTANT>__const_<n>`, numbered from 1 per constant in the file's order."""
    constant: str
    """The module-level name the mutated literal is bound to (`<CONSTANT>`)."""
    line: int
    before: str
    after: str
    source: str
    """The whole file with this one mutant in it."""


def _targets(statement: cst.BaseSmallStatement) -> list[str]:
    if isinstance(statement, cst.Assign):
        return [t.target.value for t in statement.targets if isinstance(t.target, cst.Name)]
    if isinstance(statement, cst.AnnAssign) and statement.value is not None:
        return [statement.target.value] if isinstance(statement.target, cst.Name) else []
    return []


def _literals(node: cst.CSTNode) -> Iterator[cst.BaseNumber | cst.SimpleString]:
    """The number and short string literals under `node`, annotations and type names aside."""
    if isinstance(node, cst.Annotation):
        return
    if (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Name)
        and node.func.value in SKIPPED_CALLS
    ):
        return
    if isinstance(node, cst.ConcatenatedString):
        text = node.evaluated_value  # "a " "b": one string, prose when long as a whole
        if not isinstance(text, str) or len(text) > MAX_STRING:
            return
    if isinstance(node, cst.Integer | cst.Float):
        yield node
        return
    if isinstance(node, cst.SimpleString):
        text = node.evaluated_value
        if isinstance(text, str) and len(text) <= MAX_STRING:
            yield node
        return
    for child in node.children:
        yield from _literals(child)


def constant_mutants(source: str, dotted: str) -> list[ConstantMutant]:
    """Every mutant of the module-level literals of `source`, as mutmut's operators make them."""
    wrapper = MetadataWrapper(cst.parse_module(source))
    module = wrapper.module
    positions = wrapper.resolve(PositionProvider)
    lines = source.splitlines()
    found: list[ConstantMutant] = []
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            names = [n for n in _targets(small) if n != "__all__"]
            value = getattr(small, "value", None)
            if not names or value is None:
                continue
            count = 0
            for literal in _literals(value):
                mutated_nodes: list[cst.CSTNode] = list(
                    operator_number(literal)
                    if isinstance(literal, cst.BaseNumber)
                    else operator_string(literal)
                )
                for mutated in mutated_nodes:
                    count += 1
                    new_module = module.deep_replace(literal, mutated)
                    assert isinstance(new_module, cst.Module)
                    line = positions[literal].start.line
                    new_lines = new_module.code.splitlines()
                    found.append(
                        ConstantMutant(
                            name=f"{dotted}.{names[0]}__const_{count}",
                            constant=names[0],
                            line=line,
                            before=lines[line - 1].strip(),
                            after=new_lines[line - 1].strip(),
                            source=new_module.code,
                        )
                    )
    return found


def judge_constants(module: Module, work: Path) -> list[tuple[ConstantMutant, bool]]:
    """Each constant mutant of `module` with whether its tests failed on it (killed), run in the
    copy `work` (the file is put back after each)."""
    target = work / module.path
    original = target.read_text(encoding="utf-8")
    roots = [str(work)] + ([str(work / module.root)] if module.root != "." else [])
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(roots),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    judged: list[tuple[ConstantMutant, bool]] = []
    try:
        for mutant in constant_mutants(original, module.dotted):
            target.write_text(mutant.source, encoding="utf-8")
            try:
                done = subprocess.run(
                    [
                        sys.executable,
                        "-m",
                        "pytest",
                        "-x",
                        "-q",
                        "-p",
                        "no:cacheprovider",
                        *module.tests,
                    ],
                    cwd=work,
                    env=env,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    timeout=TIMEOUT_SECONDS,
                    check=False,
                )
                killed = done.returncode != 0
            except subprocess.TimeoutExpired:
                killed = True  # a test hung on it: told apart
            finally:
                stop_leftovers(work)  # what its tests started, which a timeout does not end
            judged.append((mutant, killed))
    finally:
        target.write_text(original, encoding="utf-8")
    return judged
