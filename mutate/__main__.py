"""`python -m mutate [--module KEY] [--write-benchmarks-md]` (`make mutate [MODULE=KEY]`): mutate
the pure cores one module at a time, print each module's kill rate and its survivors with their
lines, and fail when a module kills fewer than 90% of its non-equivalent mutants."""

from __future__ import annotations

import argparse
import os
import time
from dataclasses import replace
from datetime import UTC, datetime
from importlib.metadata import version

from mutate.constants import ConstantMutant, judge_constants
from mutate.equivalents import parse_equivalents
from mutate.load import LoadSampler
from mutate.modules import FLOOR, MODULES, Module, by_key
from mutate.report import (
    Row,
    benchmarks_section,
    module_line,
    replace_section,
    survivor_line,
)
from mutate.results import tally
from mutate.run import REPO, WORK, children_cpu, mutate_module
from mutate.unreached import unreached

EQUIVALENTS = REPO / "tests" / "mutation-equivalent.txt"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mutate", description=__doc__)
    parser.add_argument(
        "--module",
        metavar="KEY",
        help=f"mutate one module (or several, comma-separated): {', '.join(m.key for m in MODULES)}"
        " (or its path)",
    )
    parser.add_argument(
        "--no-constants",
        action="store_true",
        help="skip the module constants' mutants (mutate/constants.py): mutmut's own run only",
    )
    parser.add_argument(
        "--write-benchmarks-md",
        action="store_true",
        help="also rewrite the mutation section of BENCHMARKS.md (a run of every module)",
    )
    args = parser.parse_args(argv)
    try:
        modules: tuple[Module, ...] = (
            tuple(by_key(key) for key in args.module.split(",")) if args.module else MODULES
        )
    except KeyError as error:
        parser.error(str(error.args[0]))
    if args.write_benchmarks_md and args.module:
        parser.error("--write-benchmarks-md writes every module's figures: run them all")
    equivalents = parse_equivalents(
        EQUIVALENTS.read_text(encoding="utf-8"), str(EQUIVALENTS.relative_to(REPO))
    )
    tool = f"mutmut {version('mutmut')}"
    print(f"{tool}; work copies under {WORK.relative_to(REPO)}/ (the real tree is never mutated)")
    started = time.monotonic()
    rows: list[Row] = []
    broken: list[str] = []
    with LoadSampler() as load:
        for module in modules:
            print(f"\n{module.key}: {module.path} against {len(module.tests)} test file(s) ...")
            try:
                outcome = mutate_module(module)
            except RuntimeError as error:  # its clean test run failed, or mutmut itself
                print(f"  {module.key}: no figures: {error}")
                broken.append(module.key)
                continue
            counted = tally(outcome.mutants, equivalents, f"{module.dotted}.")
            constants: list[tuple[ConstantMutant, bool]] = []
            if not args.no_constants:
                started_constants, cpu_before = time.monotonic(), children_cpu()
                constants = judge_constants(module, WORK / module.key)
                outcome = replace(
                    outcome,
                    seconds=outcome.seconds + time.monotonic() - started_constants,
                    cpu_seconds=outcome.cpu_seconds + children_cpu() - cpu_before,
                )
            row = Row(
                module,
                counted,
                outcome.seconds,
                outcome.cpu_seconds,
                constants=(sum(k for _, k in constants), len(constants)),
            )
            rows.append(row)
            print(module_line(row))
            for mutant in counted.survivors:
                print(survivor_line(module, mutant))
            for constant, killed in constants:
                if not killed:
                    print(
                        f"  survived (constant): {module.path}:{constant.line}: "
                        f"{constant.before!r} -> {constant.after!r}\n      {constant.name}"
                    )
            source = (REPO / module.path).read_text(encoding="utf-8")
            left = unreached(source, {constant.constant for constant, _ in constants})
            print(f"  not mutated (mutmut, and prose or non-literal constants): {left.words()}")
            for name in counted.stale_equivalents:
                print(f"  stale entry in {EQUIVALENTS.name} (gone, or killed now): {name}")
            print(f"  log: {outcome.log.relative_to(REPO)}")
    total = time.monotonic() - started
    print("\nKill rate per module (killed / non-equivalent mutants):")
    for row in rows:
        print(module_line(row))
    cpu = sum(row.cpu_seconds for row in rows)
    print(
        f"total {total:.0f} s on {os.cpu_count()} cores ({cpu:.0f} s of CPU: "
        f"{cpu / (os.cpu_count() or 1):.0f} s on idle cores); {load.words()}"
    )
    below = [row.module.key for row in rows if row.counted.rate < FLOOR]
    if broken:
        print(f"FAILED: no figures for {', '.join(broken)} (see above)")
        return 1
    if args.write_benchmarks_md:
        when = datetime.now(UTC).strftime("%Y-%m-%d")
        section = benchmarks_section(rows, tool, when, total, load.words())
        path = REPO / "BENCHMARKS.md"
        path.write_text(replace_section(path.read_text(encoding="utf-8"), section))
        print(f"wrote {path.relative_to(REPO)}")
    if below:
        print(
            f"FAILED: below the {FLOOR:.0%} floor: {', '.join(below)}; kill each survivor with a "
            f"test that asserts behaviour, or list it in {EQUIVALENTS.relative_to(REPO)} with "
            "why no test can tell it apart"
        )
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
