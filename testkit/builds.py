"""Where a tools/ build keeps its output, as its own build.sh says (``--where``): the one way the
tests ask, so the cache layout lives in tools/lib.sh alone."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path

__all__ = ["TOOLS_DIR", "where"]

TOOLS_DIR = Path(__file__).resolve().parent.parent / "tools"


def where(tool: str, env: Mapping[str, str] | None = None) -> Path:
    """The directory ``tools/<tool>/build.sh`` keeps (or would keep) its build in; builds
    nothing. ``env`` replaces the environment (a PATH without another install of the tool,
    which the script would otherwise name). Raises ``RuntimeError`` when it cannot say."""
    done = subprocess.run(
        ["bash", str(TOOLS_DIR / tool / "build.sh"), "--where"],
        capture_output=True,
        text=True,
        env=None if env is None else dict(env),
    )
    if done.returncode != 0 or not done.stdout.strip():
        raise RuntimeError(f"tools/{tool}/build.sh --where failed: {done.stderr.strip()}")
    return Path(done.stdout.strip())
