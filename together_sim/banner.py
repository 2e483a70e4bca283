"""The one line a starting simulator prints on stdout, and how a parent process reads it: the
drill and testkit start a simulator as a user would and need its URL."""

from __future__ import annotations

import select
import subprocess
import time
from typing import Final

BANNER: Final = "together simulator listening on "


def read_banner(proc: subprocess.Popen[str], timeout: float, interval: float) -> str | None:
    """The URL a starting simulator prints on stdout (its :data:`BANNER` line), or None if it
    exits or ``timeout`` seconds pass first."""
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], interval)
        if ready:
            line = proc.stdout.readline()
            if line.startswith(BANNER):
                return line[len(BANNER) :].strip()
            if not line and proc.poll() is not None:
                break
    return None
