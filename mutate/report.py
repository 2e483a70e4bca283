"""What `make mutate` prints, and its section of BENCHMARKS.md (which `make bench` keeps when it
rewrites the rest of the file)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from mutate.modules import FLOOR, Module
from mutate.results import Mutant, Tally

__all__ = [
    "HEADING",
    "Row",
    "benchmarks_section",
    "module_line",
    "replace_section",
    "section_of",
    "survivor_line",
]

HEADING: Final = "## Mutation testing"


@dataclass(frozen=True)
class Row:
    """One module's figures: its tally, the wall time and the CPU time of its run."""

    module: Module
    counted: Tally
    seconds: float
    cpu_seconds: float
    constants: tuple[int, int] = (0, 0)
    """Module constants' mutants (`mutate/constants.py`): killed, made."""


def module_line(row: Row) -> str:
    counted = row.counted
    verdict = "ok" if counted.rate >= FLOOR else f"BELOW {FLOOR:.0%}"
    return (
        f"  {row.module.key:<15} {counted.killed:>4}/{counted.judged:<4} killed "
        f"{counted.rate:7.1%}  ({counted.total} mutants, {counted.equivalent} equivalent, "
        f"{len(counted.survivors)} surviving; constants {row.constants[0]}/{row.constants[1]} "
        f"killed; {row.seconds:.0f} s, {row.cpu_seconds:.0f} s CPU)  {verdict}"
    )


def survivor_line(module: Module, mutant: Mutant) -> str:
    where = f"{module.path}:{mutant.line}" if mutant.line else module.path
    return (
        f"  {mutant.status}: {where} in {mutant.function}: {mutant.before!r} -> {mutant.after!r}"
        f"\n      {mutant.name}"
    )


def benchmarks_section(
    rows: Sequence[Row], tool: str, when: str, total_seconds: float, load: str
) -> str:
    cores = os.cpu_count() or 1
    cpu = sum(row.cpu_seconds for row in rows)
    lines = [
        HEADING,
        "",
        f"`make mutate` ({tool}), {when}: every module against the unit tests that cover it "
        f"(`mutate/modules.py`), 2 workers, on {cores} cores. Total {total_seconds:.0f} s of "
        f"wall time under a {load}: a shared machine, other work ran beside it. The run "
        f"itself took {cpu:.0f} s of CPU (mutmut and every process under it), "
        f"{cpu / cores:.0f} s on {cores} idle cores. Equivalent mutants are listed, each with "
        "its reason, in `tests/mutation-equivalent.txt`; the floor is "
        f"{FLOOR:.0%} of the rest killed in each module.",
        "",
        "| Module | File | Mutants | Equivalent | Killed | Kill rate | Constants killed | Wall s "
        "| CPU s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        counted = row.counted
        lines.append(
            f"| {row.module.key} | `{row.module.path}` | {counted.total} | "
            f"{counted.equivalent} | {counted.killed} | {counted.rate:.1%} | "
            f"{row.constants[0]}/{row.constants[1]} | {row.seconds:.0f} | "
            f"{row.cpu_seconds:.0f} |"
        )
    return "\n".join(lines) + "\n"


def section_of(text: str) -> str | None:
    """The mutation section of a BENCHMARKS.md text, if it has one."""
    start = text.find(f"\n{HEADING}\n")
    if start < 0:
        return None
    end = text.find("\n## ", start + 1)
    return text[start + 1 : end + 1 if end >= 0 else len(text)]


def replace_section(text: str, section: str) -> str:
    """`text` with its mutation section replaced by `section` (appended when it has none)."""
    old = section_of(text)
    if old is None:
        return text.rstrip("\n") + "\n\n" + section
    return text.replace(old, section if text.endswith(old) else section + "\n", 1)
