"""Running mutmut on one module, in a copy of the tree: `.build/mutate/<key>/` holds a copy of
every file git knows (committed or not, ignored ones left out), and mutmut makes its own `mutants/`
copy inside that, so no mutant is ever written into the real tree."""

from __future__ import annotations

import contextlib
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Final

from mutate.modules import Module
from mutate.results import Mutant, function_of, read_mutants

__all__ = ["REPO", "WORK", "Outcome", "children_cpu", "mutate_module", "stop_leftovers"]

REPO: Final = Path(__file__).resolve().parents[1]
WORK: Final = REPO / ".build" / "mutate"
"""Under `.build/`: ignored by git, ruff and mypy."""
SOURCE_PACKAGES: Final = (
    "together_facts",
    "together_api",
    "together_provider",
    "together_sim",
    "together_autoscaler",
    "together_drill",
    "together_policy",
)
"""What mutmut copies as source (and imports from its copy); only the module is mutated. Every
package a test may import is here, so no test imports the real tree by way of the editable
install."""
SOURCE_ROOT: Final = "src"
"""Where a module whose package is not at the top (`Module.root`) is put in the copy: mutmut
imports from, and strips from its mutants' names, only `.`, `src/` or `source/`, so a copy of the
root under `src/` is imported first and its mutants are named as the package is imported."""
WORKERS: Final = 2
"""mutmut's forked test runners: the 2 cores of the team's machines and CI."""


@dataclass(frozen=True)
class Outcome:
    module: Module
    mutants: tuple[Mutant, ...]
    seconds: float
    cpu_seconds: float
    """User and system time of mutmut and every process under it: what the run cost whatever
    else the machine was doing (divided by the cores, the wall time it takes on an idle one)."""
    log: Path


def mutate_module(module: Module, *, workers: int = WORKERS) -> Outcome:
    """Copy the tree, mutate `module`, run its tests on each mutant; the verdict of each."""
    started, cpu_before = time.monotonic(), children_cpu()
    work = WORK / module.key
    if work.exists():
        shutil.rmtree(work)
    _copy_tree(work)
    mutated = _place_root(work, module)
    _write_config(work, module, mutated)
    log = work / "mutmut.log"
    with log.open("w", encoding="utf-8") as out:
        try:
            _mutmut(work, workers, out)
            if module.through_processes and _give_process_tests(work, module, mutated):
                _mutmut(work, workers, out)
        finally:
            stop_leftovers(work)
    source = (REPO / module.path).read_text(encoding="utf-8")
    mutants = tuple(read_mutants(work / "mutants", mutated, source))
    cpu = children_cpu() - cpu_before
    return Outcome(module, mutants, time.monotonic() - started, cpu, log)


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _copy_tree(work: Path) -> None:
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        check=True,
        capture_output=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = REPO / name
        if not source.is_file():  # deleted in the work tree, not yet in git
            continue
        target = work / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)


def _place_root(work: Path, module: Module) -> str:
    """The mutated file's path in the copy: `module.path`, or for a module under another root
    that root's copy under `src/` (the root itself stays, unmutated, for tests that read it)."""
    if module.root == ".":
        return module.path
    target = work / SOURCE_ROOT
    if target.exists():
        raise RuntimeError(f"{target} exists: the copy has no room for {module.root}/")
    shutil.copytree(work / module.root, target)
    return f"{SOURCE_ROOT}/{module.inner}"


def _write_config(work: Path, module: Module, mutated: str) -> None:
    """The repository's pyproject.toml (pytest reads its markers and options from it in the
    copy) with a `[tool.mutmut]` table for this module."""
    sources = [*SOURCE_PACKAGES, *([SOURCE_ROOT] if module.root != "." else [])]
    also_copy = sorted(p.name for p in work.iterdir() if p.name not in sources)
    table = {
        "source_paths": sources,
        "also_copy": also_copy,
        "only_mutate": [mutated],
        "pytest_add_cli_args_test_selection": list(module.tests),
        # No cache directory; the xdist plugin stays loaded but idle (no -n).
        "pytest_add_cli_args": ["-p", "no:cacheprovider"],
    }
    lines = ["", "[tool.mutmut]"] + [f"{key} = {json.dumps(value)}" for key, value in table.items()]
    pyproject = work / "pyproject.toml"
    pyproject.write_text(pyproject.read_text(encoding="utf-8") + "\n".join(lines) + "\n")


def _mutmut(work: Path, workers: int, out: IO[str]) -> None:
    """`mutmut run` in `work`; its progress goes to the log, a failure shows the log's tail."""
    mutmut = Path(sys.executable).parent / "mutmut"
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run(
        [str(mutmut), "run", "--max-children", str(workers)],
        cwd=work,
        env=env,
        stdout=out,
        stderr=subprocess.STDOUT,
        check=False,
    )
    if done.returncode != 0:
        tail = (work / "mutmut.log").read_text(encoding="utf-8", errors="replace")[-3000:]
        raise RuntimeError(f"mutmut run failed in {work} (exit {done.returncode}):\n{tail}")


def stop_leftovers(work: Path) -> None:
    """Kill what mutants left behind: a mutant launcher that never exits, or a command it never
    stopped, outlives the test that mutmut (or `mutate/constants.py`) killed at its timeout. Each
    runs in the copy (the tests start their processes there), so a process whose working
    directory is under `work` is one of this run's, and nothing else is touched."""
    killed = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cwd = Path(os.readlink(entry / "cwd"))
        except OSError:  # gone already, or not ours to read
            continue
        if cwd == work or work in cwd.parents:
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(entry.name), signal.SIGKILL)
                killed += 1
    if killed:
        print(f"  {killed} process(es) a mutant left running in the copy: killed")


def _give_process_tests(work: Path, module: Module, mutated: str) -> bool:
    """Give the module's child-process tests to each of its functions that no test called in
    process, and clear those mutants' "no tests" verdicts so the next `mutmut
    run` judges them. False when there was none."""
    mutants = work / "mutants"
    stats_file = mutants / "mutmut-stats.json"
    stats = json.loads(stats_file.read_text(encoding="utf-8"))
    prefixes = module.through_processes
    tests = [test for test in stats["duration_by_test"] if test.startswith(prefixes)]
    meta_file = mutants / f"{mutated}.meta"
    meta = json.loads(meta_file.read_text(encoding="utf-8"))
    by_function = stats["tests_by_mangled_function_name"]
    untested = {
        name
        for name, code in meta["exit_code_by_key"].items()
        if code == 33 and not by_function.get(_mangled(name))
    }
    if not untested or not tests:
        return False
    for name in untested:
        by_function[_mangled(name)] = tests
        meta["exit_code_by_key"][name] = None
    stats_file.write_text(json.dumps(stats, indent=4), encoding="utf-8")
    meta_file.write_text(json.dumps(meta, indent=4), encoding="utf-8")
    return True


def _mangled(name: str) -> str:
    """mutmut's key for a mutant's function: the name without `__mutmut_N`."""
    assert function_of(name)
    return name.rpartition("__mutmut_")[0]
