"""The equivalent mutants, proven rather than trusted (issue 51): each entry of
`tests/mutation-equivalent.txt` names a mutant, says why no test can tell it apart, and stores the
line it changes, before and after. mutmut numbers a function's mutants in order, so after an edit
a listed number may name another mutant, a real survivor; `regenerate` makes a module's mutants
again with mutmut's own mutation function (no test run: seconds), and `mismatches` names every
entry whose mutant is gone or changes another line than its stored text says.

The file's format, one entry per mutant::

    NAME: why no test can tell it apart
        - the line before (stripped)
        + the line after (stripped; `(line removed)` when the mutant removes it)
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from mutmut import configuration
from mutmut.mutation.file_mutation import mutate_file_contents

from mutate.modules import Module
from mutate.results import changed_line

__all__ = ["Equivalent", "format_entry", "mismatches", "parse_equivalents", "regenerate"]

BEFORE: Final = "- "
AFTER: Final = "+ "


@dataclass(frozen=True)
class Equivalent:
    name: str
    reason: str
    before: str
    after: str


def parse_equivalents(text: str, where: str) -> dict[str, Equivalent]:
    """Every entry of the list; `#` starts a comment line. An entry without a reason, or without
    both its lines, is an error naming its line."""
    entries: list[tuple[int, str, list[tuple[int, str]]]] = []  # a name line, its indented lines
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if raw[0].isspace() and entries:
            entries[-1][2].append((number, line))
        else:
            entries.append((number, line, []))
    found: dict[str, Equivalent] = {}
    for start, head, indented in entries:
        name, colon, reason = head.partition(":")
        name, reason = name.strip(), reason.strip()
        if not colon or not reason or " " in name or "__mutmut_" not in name:
            raise ValueError(
                f"{where}:{start}: {head!r} is not 'MUTANT_NAME: reason'; every equivalent "
                "mutant says why no test can tell it apart from the real code"
            )
        if len(indented) < 2:
            raise ValueError(
                f"{where}:{start}: {name!r} lacks its '{BEFORE}before' and '{AFTER}after' "
                "lines: every equivalent mutant stores the line it changes"
            )
        if len(indented) > 2:
            number, line = indented[2]
            raise ValueError(
                f"{where}:{number}: {name} stores one line before and one after, not {line!r}"
            )
        if name in found:
            raise ValueError(f"{where}:{start}: {name} is listed twice")
        (at_before, before), (at_after, after) = indented
        found[name] = Equivalent(
            name,
            reason,
            _stored(where, at_before, before, BEFORE),
            _stored(where, at_after, after, AFTER),
        )
    return found


def _stored(where: str, number: int, line: str, mark: str) -> str:
    """The text of a `- before` or `+ after` line (`-` alone: an empty line)."""
    if line == mark.strip():
        return ""
    if not line.startswith(mark):
        raise ValueError(f"{where}:{number}: expected a '{mark}' line, got {line!r}")
    return line.removeprefix(mark)


def format_entry(name: str, reason: str, before: str, after: str) -> str:
    return f"{name}: {reason}\n    {BEFORE}{before}\n    {AFTER}{after}\n"


def _load_tool_defaults() -> None:
    """mutmut's settings with its defaults, loaded once. mutmut reads them from the working
    directory's pyproject.toml (a real run's copy has its own `[tool.mutmut]` table, written by
    mutate/run.py); without one it guesses the source directory from the directory's *name*, and
    fails in a clone whose folder is not named after a package. Making mutants again needs only
    the defaults (no pattern excluded), so they are read in an empty directory that names one.
    They make the same mutants as a real run: run.py's table chooses the file and the tests, and
    sets none of the keys that change a file's mutants (`do_not_mutate_patterns`,
    `mutate_only_covered_lines`); one that did would have to be written here too."""
    if configuration._config is not None:
        return
    here = Path.cwd()
    with tempfile.TemporaryDirectory(prefix="mutmut-defaults-") as empty:
        Path(empty, "pyproject.toml").write_text('[tool.mutmut]\nsource_paths = ["."]\n')
        os.chdir(empty)
        try:
            configuration.config()
        finally:
            os.chdir(here)


def regenerate(module: Module, root: Path) -> dict[str, tuple[str, str]]:
    """Each mutant of `module` (by its full name) with the first line it changes, before and
    after, as `mutmut run` makes it: its own `mutate_file_contents`, the one call its run makes
    per file, over the file under `root` (the tests of each mutant are never run)."""
    source = (root / module.path).read_text(encoding="utf-8")
    _load_tool_defaults()
    mutated = mutate_file_contents(module.inner, source)
    lines = mutated.code.splitlines()
    spans = mutated.line_span_by_function_name
    found: dict[str, tuple[str, str]] = {}
    for name in mutated.mutant_names:
        orig = spans[name.rpartition("__mutmut_")[0] + "__mutmut_orig"]
        mine = spans[name]
        _, before, after = changed_line(lines[orig.start : orig.end], lines[mine.start : mine.end])
        found[f"{module.dotted}.{name}"] = (before, after)
    return found


def mismatches(
    equivalents: Mapping[str, Equivalent], modules: Iterable[Module], root: Path
) -> list[str]:
    """One sentence per entry whose mutant is gone or changes another line than its entry
    says (only the modules that have entries are mutated again)."""
    problems: list[str] = []
    for module in modules:
        prefix = f"{module.dotted}."
        listed = [e for name, e in equivalents.items() if name.startswith(prefix)]
        if not listed:
            continue
        made = regenerate(module, root)
        for entry in listed:
            if entry.name not in made:
                problems.append(f"{entry.name}: no such mutant of {module.path} any more")
            elif made[entry.name] != (entry.before, entry.after):
                before, after = made[entry.name]
                problems.append(
                    f"{entry.name} now changes {before!r} -> {after!r}, not {entry.before!r} "
                    f"-> {entry.after!r}: the mutant of this number changed; judge it again"
                )
    return problems
