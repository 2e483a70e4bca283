"""`make mutate`'s own rules, checked in `make test` (the mutation run itself is not): every
equivalent mutant says why, the table names files that exist, and a kill rate counts what it
says."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mutate.equivalents import parse_equivalents
from mutate.modules import MODULES, by_key
from mutate.report import HEADING, replace_section, section_of
from mutate.results import Mutant, function_of, read_mutants, tally

ROOT = Path(__file__).resolve().parents[2]
EQUIVALENTS = ROOT / "tests" / "mutation-equivalent.txt"


def test_every_equivalent_mutant_has_a_reason() -> None:
    text = EQUIVALENTS.read_text(encoding="utf-8")
    listed = parse_equivalents(text, EQUIVALENTS.name)
    assert all(len(e.reason.split()) >= 3 for e in listed.values()), listed
    modules = tuple(f"{m.dotted}." for m in MODULES)
    assert [name for name in listed if not name.startswith(modules)] == []


@pytest.mark.parametrize(
    "line",
    [
        "together_facts.prices.x_hourly_cost__mutmut_3",
        "together_facts.prices.x_hourly_cost__mutmut_3:",
        "together_facts.prices.x_hourly_cost__mutmut_3:   ",
        "no mutant here: a reason",
    ],
)
def test_a_line_without_a_reason_is_refused_with_its_number(line: str) -> None:
    with pytest.raises(ValueError, match=r"equivalent.txt:2: .*reason"):
        parse_equivalents(f"# comment\n{line}\n", "equivalent.txt")


def test_the_table_names_files_that_exist_and_keys_that_are_unique() -> None:
    assert len({m.key for m in MODULES}) == len(MODULES)
    for module in MODULES:
        assert (ROOT / module.path).is_file(), module.path
        assert module.tests and all((ROOT / t).is_file() for t in module.tests), module.key
        files = {prefix.partition("::")[0] for prefix in module.through_processes}
        assert files <= set(module.tests), module.key
        for prefix in module.through_processes:  # each names at least one test of its file
            file, _, start = prefix.partition("::")
            assert f"def {start}" in (ROOT / file).read_text(), prefix
    assert by_key("together_facts/prices.py") == by_key("prices") == by_key("together_facts.prices")
    with pytest.raises(KeyError, match="choose one of: rules, "):
        by_key("nope")


def test_a_mutant_name_names_its_function() -> None:
    assert function_of("together_facts.prices.x_hourly_cost__mutmut_3") == "hourly_cost"
    assert function_of("together_facts.prices.x__shown_path__mutmut_12") == "_shown_path"
    method = "pkg.mod.xǁPriceTableǁwith_overrides__mutmut_7"
    assert function_of(method) == "PriceTable.with_overrides"


def _mutant(name: str, status: str) -> Mutant:
    return Mutant(name=name, status=status, line=1, before="a", after="b")


def test_the_kill_rate_leaves_out_equivalents_and_counts_timeouts_as_kills() -> None:
    mutants = [
        _mutant("m.x_f__mutmut_1", "killed"),
        _mutant("m.x_f__mutmut_2", "timeout"),
        _mutant("m.x_f__mutmut_3", "survived"),
        _mutant("m.x_f__mutmut_4", "survived"),
        _mutant("m.x_f__mutmut_5", "no tests"),
    ]
    equivalents = {"m.x_f__mutmut_4": "same", "m.x_f__mutmut_9": "gone", "n.x_g__mutmut_1": "n"}
    counted = tally(mutants, equivalents, "m.")
    assert (counted.total, counted.killed, counted.equivalent, counted.judged) == (5, 2, 1, 4)
    assert counted.rate == 0.5
    assert [m.name for m in counted.survivors] == ["m.x_f__mutmut_3", "m.x_f__mutmut_5"]
    assert counted.stale_equivalents == ("m.x_f__mutmut_9",)
    listed_but_killed = tally(mutants, {"m.x_f__mutmut_1": "why"}, "m.")
    assert listed_but_killed.stale_equivalents == ("m.x_f__mutmut_1",)
    assert tally([], {}, "m.").rate == 1.0


def test_a_survivor_is_shown_at_its_line_in_the_real_file(tmp_path: Path) -> None:
    """mutmut's copy renames each function and keeps its body; the line shown is the real one."""
    source = "import os\n\n\ndef f(a):\n    b = a + 1\n    return b * 2\n"
    copy = [
        "def f(a): pass",
        "# a comment that stood before f",
        "def x_f__mutmut_orig(a):",
        "    b = a + 1",
        "    return b * 2",
        "",
        "def x_f__mutmut_1(a):",
        "    b = a + 1",
        "    return b / 2",
    ]
    (tmp_path / "m.py").write_text("\n".join(copy) + "\n")
    spans = {"x_f__mutmut_orig": [1, 5], "x_f__mutmut_1": [5, 9]}
    (tmp_path / "m.py.spans").write_text(json.dumps({"version": 1, "spans": spans}))
    (tmp_path / "m.py.meta").write_text(json.dumps({"exit_code_by_key": {"m.x_f__mutmut_1": 0}}))
    (mutant,) = read_mutants(tmp_path, "m.py", source)
    assert (mutant.status, mutant.line, mutant.before, mutant.after) == (
        "survived",
        6,
        "return b * 2",
        "return b / 2",
    )


def test_the_mutation_section_is_replaced_in_place_and_kept_by_a_rewrite() -> None:
    section = f"{HEADING}\n\nnew figures\n"
    middle = f"# Benchmarks\n\n## A\n\na\n\n{HEADING}\n\nold\n\n## B\n\nb\n"
    assert replace_section(middle, section) == (
        f"# Benchmarks\n\n## A\n\na\n\n{HEADING}\n\nnew figures\n\n## B\n\nb\n"
    )
    last = f"# Benchmarks\n\n{HEADING}\n\nold\n"
    assert replace_section(last, section) == f"# Benchmarks\n\n{section}"
    assert replace_section("# Benchmarks\n", section) == f"# Benchmarks\n\n{section}"
    assert section_of(replace_section("# Benchmarks\n", section)) == section
    assert section_of("# Benchmarks\n") is None
