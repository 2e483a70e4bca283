"""Which Python language host the engine runs, ours (tools/pulumi-engine/langhost) or upstream's, so
a test of what only ours does skips on a release install instead of failing (docs/engine.md)."""

from __future__ import annotations

import functools
import os
import subprocess
from pathlib import Path

from testkit.builds import where

EXTRAS_FLAG = "-together-extras"
HOST = "pulumi-language-python"


@functools.cache
def host_extras(bin_dir: Path) -> frozenset[str]:
    """The extras the Python host in `bin_dir` lists (none for upstream's, or no host at all).

    Our host lists its extras, one per line, for ``pulumi-language-python -together-extras``;
    upstream's rejects the unknown flag (exit 2), which lists none."""
    try:
        out = subprocess.run(
            [str(bin_dir / HOST), EXTRAS_FLAG],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except OSError:
        return frozenset()
    if out.returncode != 0:
        return frozenset()
    return frozenset(line.strip() for line in out.stdout.splitlines() if line.strip())


def missing_extras_reason(bin_dir: Path, needed: tuple[str, ...]) -> str | None:
    """Why a test needing `needed` cannot run on the engine in `bin_dir`; None when it can.

    `make test` takes a release Pulumi when one is first on PATH (tools/pulumi-engine/build.sh),
    and a release ships upstream's host. Tests of our host's extras (Cancel ends it;
    TOGETHER_LANGHOST_HEALTH_INTERVAL sets how often it probes the engine) name the extras they
    need (`@pytest.mark.langhost_extras(...)`, see tests/conftest.py) and skip with this reason."""
    missing = sorted(set(needed) - host_extras(bin_dir))
    if not missing:
        return None
    return (
        f"needs this repo's Python language host, but {bin_dir / HOST} does not list "
        f"{', '.join(missing)} (`{HOST} {EXTRAS_FLAG}`): upstream's host, which a release "
        "Pulumi first on PATH brings, lacks them. To test ours, run `make test` with no release "
        "Pulumi on PATH (tools/pulumi-engine/build.sh then builds ours), or set "
        "TOGETHER_ENGINE_BIN to the directory that build printed"
    )


def our_build_dir() -> Path | None:
    """Where tools/pulumi-engine/build.sh keeps our engine, ignoring any Pulumi on PATH (which
    the script would take instead); None if the script cannot say."""
    dirs = os.environ.get("PATH", "").split(os.pathsep)
    path = os.pathsep.join(d for d in dirs if d and not Path(d, "pulumi").exists())
    try:
        return where("pulumi-engine", env={**os.environ, "PATH": path})
    except (OSError, RuntimeError):
        return None
