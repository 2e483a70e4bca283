"""Atomic checkpoints: a checkpoint appears under its final name only once every byte of it is on
disk, so a kill at any moment leaves the previous one as the latest, never a partial one."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Final

CHECKPOINT_DIR_ENV: Final = "CHECKPOINT_DIR"
INDEX_ENV: Final = "JOB_COMPLETION_INDEX"
PARTIAL_PREFIX: Final = ".partial-"
"""A checkpoint being written; never read, removed when a new store opens the directory."""
_NAME: Final = re.compile(r"^step-(\d+)\.ckpt$")

Writer = Callable[[BinaryIO], object]
"""Writes a checkpoint into an open binary file (``lambda f: torch.save(state, f)``)."""


@dataclass(frozen=True)
class Checkpoint:
    """A complete checkpoint: ``step`` steps of work are in it."""

    step: int
    path: Path

    def read_bytes(self) -> bytes:
        return self.path.read_bytes()


def index_directory(environ: Mapping[str, str] = os.environ) -> Path:
    """``$CHECKPOINT_DIR/$JOB_COMPLETION_INDEX``: this index's own directory on the shared volume
    (index 0 outside an Indexed Job)."""
    root = environ.get(CHECKPOINT_DIR_ENV)
    if not root:
        raise ValueError(
            f"{CHECKPOINT_DIR_ENV} is not set: it names the directory on the shared volume that "
            "outlives the node; CheckpointingWorker sets it, elsewhere set it to such a directory"
        )
    index = environ.get(INDEX_ENV) or "0"
    if not index.isdigit():
        raise ValueError(f"{INDEX_ENV}={index!r} is not an index; Kubernetes sets a number")
    return Path(root) / index


class CheckpointStore:
    """The checkpoints of one index, in one directory, the last ``keep`` of them kept.

    :meth:`save` writes to a temporary name, fsyncs the file, renames it to its final name and
    fsyncs the directory, so the rename itself is on disk; :meth:`latest` reads only final names.
    A writer killed mid-save (SIGKILL at the end of the grace period, a node removed) leaves a
    ``.partial-*`` file that :meth:`latest` never returns.
    """

    def __init__(self, directory: Path | str, keep: int = 3) -> None:
        if keep < 1:
            raise ValueError(f"keep={keep}: keep at least the latest checkpoint (keep >= 1)")
        self.directory = Path(directory)
        self.keep = keep
        self.directory.mkdir(parents=True, exist_ok=True)

    @classmethod
    def from_env(cls, keep: int = 3, environ: Mapping[str, str] = os.environ) -> CheckpointStore:
        return cls(index_directory(environ), keep)

    def checkpoints(self) -> list[Checkpoint]:
        """The complete checkpoints, oldest first."""
        found = []
        for path in self.directory.iterdir():
            match = _NAME.match(path.name)
            if match:
                found.append(Checkpoint(int(match.group(1)), path))
        return sorted(found, key=lambda c: c.step)

    def latest(self) -> Checkpoint | None:
        """The complete checkpoint with the most steps, or None: start from scratch."""
        complete = self.checkpoints()
        return complete[-1] if complete else None

    def save(self, step: int, payload: bytes | Writer) -> Checkpoint:
        """Write the checkpoint of ``step`` steps atomically; then keep only the last ``keep``."""
        final, partial = self._names(step)
        write_atomically(final, payload, partial)
        self.prune()
        return Checkpoint(step, final)

    def save_to_path(self, step: int, write: Callable[[Path], object]) -> Checkpoint:
        """Like :meth:`save`, for a framework that writes to a path itself
        (``trainer.save_checkpoint``): ``write`` gets the temporary path and writes one file."""
        final, partial = self._names(step)

        def write_and_fsync() -> None:
            write(partial)
            with open(partial, "rb+") as file:
                os.fsync(file.fileno())

        _publish(final, partial, write_and_fsync)
        self.prune()
        return Checkpoint(step, final)

    def _names(self, step: int) -> tuple[Path, Path]:
        if step < 0:
            raise ValueError(f"step={step}: a checkpoint holds a number of steps done (>= 0)")
        return (
            self.directory / f"step-{step:012d}.ckpt",
            self.directory / f"{PARTIAL_PREFIX}{step:012d}-{os.getpid()}",
        )

    def prune(self) -> None:
        for old in self.checkpoints()[: -self.keep]:
            old.path.unlink(missing_ok=True)

    def discard_partials(self) -> list[Path]:
        """Remove what killed writers left behind (one pod writes an index at a time:
        CheckpointingWorker's ``podReplacementPolicy: Failed``). Returns what was removed."""
        removed = [p for p in self.directory.iterdir() if p.name.startswith(PARTIAL_PREFIX)]
        for path in removed:
            path.unlink(missing_ok=True)
        return removed


def write_atomically(final: Path, payload: bytes | Writer, partial: Path) -> None:
    """Write ``partial``, fsync it, rename it to ``final`` and fsync the directory: a reader sees
    the old ``final`` or the whole new one, whenever the writer is killed."""

    def write_and_fsync() -> None:
        with open(partial, "wb") as file:
            if isinstance(payload, bytes):
                file.write(payload)
            else:
                payload(file)
            file.flush()
            os.fsync(file.fileno())

    _publish(final, partial, write_and_fsync)


def _publish(final: Path, partial: Path, write_and_fsync: Callable[[], None]) -> None:
    """The one atomic step both ways of writing share: once ``partial`` is written and fsynced,
    rename it to ``final`` and fsync the directory; on any failure remove ``partial``."""
    try:
        write_and_fsync()
        os.replace(partial, final)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    _fsync_directory(final.parent)


def _fsync_directory(directory: Path) -> None:
    """Make a rename in ``directory`` durable: without it a crash may bring back the old name."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
