"""The equivalent mutants' list proven against the tool (issue 51): every entry of
`tests/mutation-equivalent.txt` is made again with mutmut's own mutation function (no test run)
and must still change the line its entry stores. After an edit, a listed number can name another
mutant, a real survivor that the list would hide; this test names it instead."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mutate.equivalents import (
    Equivalent,
    format_entry,
    mismatches,
    parse_equivalents,
    regenerate,
)
from mutate.modules import MODULES, Module, by_key

ROOT = Path(__file__).resolve().parents[2]
EQUIVALENTS = ROOT / "tests" / "mutation-equivalent.txt"


def test_every_listed_mutant_still_changes_the_line_its_entry_stores() -> None:
    listed = parse_equivalents(EQUIVALENTS.read_text(encoding="utf-8"), EQUIVALENTS.name)
    assert mismatches(listed, MODULES, ROOT) == []


def _copy(module: Module, tmp_path: Path, text: str) -> Path:
    target = tmp_path / module.path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    return tmp_path


def _entries(module: Module, function: str) -> dict[str, Equivalent]:
    """Every mutant of `function` in the real file, written as an entry of the list."""
    made = regenerate(module, ROOT)
    text = "".join(
        format_entry(name, "a reason of words", before, after)
        for name, (before, after) in made.items()
        if f"x_{function}__mutmut_" in name
    )
    return parse_equivalents(text, "entries")


def test_an_edit_that_renumbers_a_listed_mutant_is_named(tmp_path: Path) -> None:
    """One condition added in a copy of volume/rules.py: the listed numbers of `_shrink` after
    it now name other mutants, and each is reported with what it changes now."""
    module = by_key("volume-rules")
    source = (ROOT / module.path).read_text(encoding="utf-8")
    edited = source.replace("    if old is None or ", "    if new is None or old is None or ")
    assert edited != source
    listed = _entries(module, "_shrink")
    found = mismatches(listed, [module], _copy(module, tmp_path, edited))
    assert len(listed) > 10 and len(found) >= len(listed) - 2, found
    assert all("the mutant of this number changed" in problem for problem in found)


def test_a_line_edited_under_a_listed_mutant_is_named(tmp_path: Path) -> None:
    module = by_key("volume-rules")
    source = (ROOT / module.path).read_text(encoding="utf-8")
    edited = source.replace("or after >= before:", "or after >= before or after < 0:")
    listed = _entries(module, "_shrink")
    moved = [n for n, e in listed.items() if "after >= before" in e.before]
    found = mismatches(listed, [module], _copy(module, tmp_path, edited))
    assert moved and {p.split(" ")[0] for p in found} >= set(moved)


def test_an_entry_regenerated_is_its_own_proof() -> None:
    """What the list stores is what `regenerate` makes: an entry written from it matches."""
    module = by_key("volume-rules")
    name, (before, after) = next(iter(regenerate(module, ROOT).items()))
    entry = parse_equivalents(format_entry(name, "a reason of words", before, after), "x")
    assert mismatches(entry, [module], ROOT) == []
    wrong = parse_equivalents(format_entry(name, "a reason of words", before, "x = 1"), "x")
    assert mismatches(wrong, [module], ROOT) == [
        f"{name} now changes {before!r} -> {after!r}, not {before!r} -> 'x = 1': the mutant "
        "of this number changed; judge it again"
    ]


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        ("m.x_f__mutmut_1: a reason here\n", 1, "lacks its '- before' and '+ after' lines"),
        ("m.x_f__mutmut_1: a reason\n    - a\n", 1, "lacks its '- before' and '+ after' lines"),
        ("m.x_f__mutmut_1: a reason here\n    + a\n    - b\n", 2, "expected a '- ' line"),
        ("m.x_f__mutmut_1\n    - a\n    + b\n", 1, "is not 'MUTANT_NAME: reason'"),
        ("m.x_f__mutmut_1: a reason here\n    - a\n    + b\n" * 2, 4, "is listed twice"),
        ("m.x_f__mutmut_1: a reason\n    - a\n    + b\n    + c\n", 4, "one line before and one"),
    ],
)
def test_an_entry_without_its_reason_or_its_lines_or_listed_twice_is_refused(
    text: str, where: int, message: str
) -> None:
    with pytest.raises(ValueError, match=f"equivalent.txt:{where}: .*{re.escape(message)}"):
        parse_equivalents(text, "equivalent.txt")


def test_mutants_are_made_again_from_a_clone_of_any_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """mutmut guesses its source directory from the working directory's name when no
    `[tool.mutmut]` table is there: CI's clone is in a folder named after no package, where a
    plain `mutate_file_contents` raised FileNotFoundError. The defaults are loaded wherever we
    are."""
    from mutmut import configuration

    monkeypatch.setattr(configuration, "_config", None)
    monkeypatch.chdir(tmp_path)
    made = regenerate(by_key("volume-rules"), ROOT)
    assert made and all("__mutmut_" in name for name in made)
    assert Path.cwd() == tmp_path


def test_a_real_runs_table_sets_nothing_that_changes_which_mutants_a_file_gets(
    tmp_path: Path,
) -> None:
    """`regenerate` makes mutants with mutmut's defaults, the real run with the table run.py
    writes: the two make the same mutants only while that table leaves these keys alone."""
    import tomllib

    from mutate import run

    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n", encoding="utf-8")
    module = by_key("volume-rules")
    run._write_config(tmp_path, module, module.path)
    table = tomllib.loads((tmp_path / "pyproject.toml").read_text(encoding="utf-8"))
    assert table["tool"]["mutmut"]["only_mutate"] == [module.path]
    assert {"do_not_mutate_patterns", "mutate_only_covered_lines"}.isdisjoint(
        table["tool"]["mutmut"]
    )
