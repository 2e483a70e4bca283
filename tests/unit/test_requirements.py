"""requirements.txt (what Pulumi's pip toolchain installs) pins the same versions as
constraints.txt (what `make venv` installs), and covers every runtime dependency."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PIN = re.compile(r"^([A-Za-z0-9._-]+)==(\S+)$")


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(path: Path) -> dict[str, str]:
    found = {}
    for line in path.read_text().splitlines():
        match = PIN.match(line.strip())
        if match:
            found[canonical(match.group(1))] = match.group(2)
    return found


def requirement_lines() -> list[str]:
    lines = (REPO / "requirements.txt").read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def test_requirements_pin_what_constraints_pin() -> None:
    constraints = pins(REPO / "constraints.txt")
    required = pins(REPO / "requirements.txt")
    assert required, "requirements.txt pins nothing"
    mismatched = {
        n: (v, constraints.get(n)) for n, v in required.items() if constraints.get(n) != v
    }
    assert mismatched == {}, "requirements.txt and constraints.txt disagree (name: req, constr)"


def test_every_requirement_is_pinned_or_constrained() -> None:
    lines = requirement_lines()
    assert "-c constraints.txt" in lines, "transitive dependencies must be pinned too"
    assert "-e ." in lines, "the project itself must be installed"
    loose = [line for line in lines if not line.startswith("-") and not PIN.match(line)]
    assert loose == [], "every requirement is name==version"


WORKER = tomllib.loads((REPO / "worker" / "pyproject.toml").read_text())["project"]


def test_every_runtime_dependency_is_pinned() -> None:
    """Each from the index at its requirements.txt pin; the worker library from the repository."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    names = {
        canonical(re.split(r"[<>=!~\[; ]", dep, maxsplit=1)[0]) for dep in project["dependencies"]
    }
    from_the_repository = {canonical(WORKER["name"])}
    assert names - set(pins(REPO / "requirements.txt")) == from_the_repository


def test_the_worker_library_is_installed_from_the_repository_at_the_pinned_version() -> None:
    """The project pins its worker distribution exactly at the version worker/ holds, and every
    install of the project installs that directory first (no index serves it)."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert f"{WORKER['name']}=={WORKER['version']}" in project["dependencies"]
    assert WORKER["dependencies"] == []
    lines = requirement_lines()
    assert lines.index("-e ./worker") < lines.index("-e .")
    makefile = (REPO / "Makefile").read_text()
    for install in re.findall(r"pip install [^\n]*(?:\\\n[^\n]*)*", makefile):
        if "-e '." in install:
            assert "-e ./worker" in install, install
