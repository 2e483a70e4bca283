"""Reading a module's mutants once mutmut has judged them: the kill rate over the non-equivalent
ones, and each survivor with its line in the real file. Pure but for reading files."""

from __future__ import annotations

import ast
import difflib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

__all__ = [
    "KILLED_STATUSES",
    "Mutant",
    "Tally",
    "changed_line",
    "read_mutants",
    "status_of",
    "tally",
]

SEPARATOR: Final = "ǁ"
"""How mutmut joins a class and a method name in a mutant's name."""

KILLED_STATUSES: Final = frozenset({"killed", "timeout", "segfault"})
"""A test failed, or the mutant never finished (an endless loop a test would hang on), or it
crashed the interpreter: in each case a test run tells it apart from the real code."""

_STATUS_BY_EXIT_CODE: Final[Mapping[int | None, str]] = {
    0: "survived",
    1: "killed",
    3: "killed",
    5: "no tests",
    33: "no tests",
    34: "skipped",
    35: "suspicious",
    36: "timeout",
    24: "timeout",
    -24: "timeout",
    152: "timeout",
    255: "timeout",
    -9: "segfault",
    -11: "segfault",
    None: "not checked",
}
"""mutmut's exit codes as its own `mutmut results` names them (mutmut.stats.status_by_exit_code);
anything else it calls suspicious."""


def status_of(exit_code: int | None) -> str:
    return _STATUS_BY_EXIT_CODE.get(exit_code, "suspicious")


@dataclass(frozen=True)
class Mutant:
    """One mutant of the module: `name` as `mutmut show` takes it, `line` in the real file."""

    name: str
    status: str
    line: int | None
    before: str
    after: str

    @property
    def function(self) -> str:
        """`Class.method` or `function`, as a reader finds it in the file."""
        return function_of(self.name)


def function_of(name: str) -> str:
    """The function a mutant name mutates: `pkg.mod.xǁCǁm__mutmut_3` -> `C.m`, `x_f__mutmut_1`
    -> `f`."""
    mangled = name.rpartition(".")[2].rpartition("__mutmut_")[0]
    if mangled.startswith(f"x{SEPARATOR}"):
        return ".".join(mangled.split(SEPARATOR)[1:3])
    return mangled.removeprefix("x_")


def read_mutants(mutants_root: Path, path: str, source: str) -> list[Mutant]:
    """Every mutant of `path` (relative to the repository) with mutmut's verdict, read from the
    copy mutmut made under `mutants_root`; lines are those of `source`, the real file's text."""
    meta = json.loads((mutants_root / f"{path}.meta").read_text(encoding="utf-8"))
    spans = json.loads((mutants_root / f"{path}.spans").read_text(encoding="utf-8"))["spans"]
    mutated = (mutants_root / path).read_text(encoding="utf-8").splitlines()
    starts = _def_lines(source)
    real = source.splitlines()
    found: list[Mutant] = []
    for name, exit_code in sorted(meta["exit_code_by_key"].items(), key=_natural):
        local = name.rpartition(".")[2]
        orig = local.rpartition("__mutmut_")[0] + "__mutmut_orig"
        line, before, after = changed_line(
            _span(mutated, spans.get(orig)), _span(mutated, spans.get(local))
        )
        start = starts.get(function_of(name))
        if start is not None and line is not None:
            line = _real_line(real, start + line, before)
        found.append(
            Mutant(
                name=name,
                status=status_of(exit_code),
                line=line if start is not None else None,
                before=before,
                after=after,
            )
        )
    return found


def _natural(item: tuple[str, object]) -> tuple[str, int]:
    head, _, number = item[0].rpartition("__mutmut_")
    return head, int(number) if number.isdigit() else 0


def _span(lines: list[str], span: list[int] | None) -> list[str]:
    """A function's lines in mutmut's copy (its spans count from 0, end excluded)."""
    return [] if span is None else lines[span[0] : span[1]]


def _real_line(real: list[str], guess: int, before: str) -> int:
    """The line of the real file the mutant changes: `guess` (the offset in mutmut's copy from
    the `def` line), or, where mutmut's copy laid the signature out differently, the first line
    from the `def` on whose text is the changed line's."""
    if not before or (0 < guess <= len(real) and real[guess - 1].strip() == before):
        return guess
    for number in range(max(guess - 20, 1), len(real) + 1):
        if real[number - 1].strip() == before:
            return number
    return guess


def changed_line(orig: list[str], mutant: list[str]) -> tuple[int | None, str, str]:
    """The offset from the `def` line of the first line the mutant changes, and the line before
    and after (the `def` line itself differs only by mutmut's renaming; blank lines before it are
    not the function's)."""
    orig, mutant = _from_def(orig), _from_def(mutant)
    matcher = difflib.SequenceMatcher(a=orig[1:], b=mutant[1:], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            before = orig[1 + i1].strip() if i1 < i2 else ""
            after = mutant[1 + j1].strip() if j1 < j2 else "(line removed)"
            return i1 + 1, before, after
    return (0, orig[0].strip(), mutant[0].strip()) if orig else (None, "", "")


def _from_def(lines: list[str]) -> list[str]:
    """From the `def` line on: mutmut's copy of a function starts with the blank lines and
    comments that stood before it."""
    while lines and not lines[0].lstrip().startswith(("def ", "async def ")):
        lines = lines[1:]
    return lines


def _def_lines(source: str) -> dict[str, int]:
    """`function` and `Class.method` -> the line of its `def` keyword (the line mutmut's copy of
    the function starts on; decorators stay out of the copy)."""
    lines: dict[str, int] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            lines[node.name] = node.lineno
        elif isinstance(node, ast.ClassDef):
            for inner in node.body:
                if isinstance(inner, ast.FunctionDef | ast.AsyncFunctionDef):
                    lines[f"{node.name}.{inner.name}"] = inner.lineno
    return lines


@dataclass(frozen=True)
class Tally:
    """A module's verdict: `killed` of `total - equivalent` mutants (a survivor listed as
    equivalent counts in neither)."""

    total: int
    killed: int
    equivalent: int
    survivors: tuple[Mutant, ...]
    stale_equivalents: tuple[str, ...]
    """Names listed as equivalent that are gone, or that a test now kills: to delete."""

    @property
    def judged(self) -> int:
        return self.total - self.equivalent

    @property
    def rate(self) -> float:
        return self.killed / self.judged if self.judged else 1.0


def tally(mutants: Iterable[Mutant], equivalents: Mapping[str, object], prefix: str) -> Tally:
    """Count one module's mutants; `prefix` (its dotted name and a dot) picks its entries out of
    the equivalents list."""
    mutants = list(mutants)
    names = {m.name for m in mutants}
    listed = {name for name in equivalents if name.startswith(prefix)}
    killed = [m for m in mutants if m.status in KILLED_STATUSES]
    equivalent = [m for m in mutants if m.status not in KILLED_STATUSES and m.name in listed]
    survivors = [m for m in mutants if m.status not in KILLED_STATUSES and m.name not in listed]
    stale = sorted((listed - names) | {m.name for m in killed if m.name in listed})
    return Tally(
        total=len(mutants),
        killed=len(killed),
        equivalent=len(equivalent),
        survivors=tuple(survivors),
        stale_equivalents=tuple(stale),
    )
