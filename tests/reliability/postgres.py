"""A throwaway PostgreSQL server for the backend tests, through the project's own script
(scripts/postgres.sh: installs Debian's postgresql when missing, initdb/pg_ctl on a loopback
port), so the tests exercise exactly what `make demo BACKEND=postgres` and the docs use."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from testkit.pulumi_env import REPO

SCRIPT = REPO / "scripts" / "postgres.sh"


@dataclass
class PostgresServer:
    """`start()` creates the cluster on first use; `stop()` keeps its data for a later `start()`."""

    state_dir: Path

    def _script(self, *args: str) -> str:
        done = subprocess.run(
            ["bash", str(SCRIPT), args[0], str(self.state_dir), *args[1:]],
            capture_output=True,
            text=True,
            timeout=600,  # the first start on a fresh machine installs the package
        )
        if done.returncode != 0:
            raise RuntimeError(f"scripts/postgres.sh {args[0]} failed:\n{done.stderr}")
        return done.stdout.strip()

    def start(self) -> PostgresServer:
        self._script("start")
        return self

    def stop(self) -> None:
        self._script("stop")

    def clean(self) -> None:
        self._script("clean")

    def url(self, table: str) -> str:
        """The Pulumi backend URL for state kept in `table` (one table per test: isolation)."""
        return self._script("url", table)

    def __enter__(self) -> PostgresServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.clean()
