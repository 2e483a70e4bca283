"""A training loop's side of the reclaim contract in one object: resume from the latest complete
checkpoint, checkpoint every N steps, and on SIGTERM checkpoint once more and exit 143."""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import NoReturn

from together_worker.checkpoints import Checkpoint, CheckpointStore, Writer, index_directory
from together_worker.reclaim import Clock, Reclaim
from together_worker.status import Run, StatusFile

POD_NAME_ENV = "POD_NAME"
"""The pod's name (CheckpointingWorker sets it from metadata.name): an Indexed Job's pods have
the hostname <job>-<index>, the same for every pod of an index, so the status file needs it."""
STATUS_EVERY_SECONDS = 5.0
"""How often plain progress (no checkpoint) is written to the status file, at most."""


class Worker:
    """One pod's worker: its checkpoint store, its reclaim, its entry in the status file.

    Use :meth:`from_env` in a pod, then :meth:`steps` as the loop::

        worker = Worker.from_env()
        latest = worker.latest()
        state = load(latest.read_bytes()) if latest else fresh()
        for step in worker.steps(total, start=latest.step if latest else 0, every=100,
                                 save=lambda f: f.write(dump(state))):
            train_one_step(state)

    A loop of its own can call :meth:`checkpoint`, :meth:`progress`, ``reclaim.requested`` and
    :meth:`exit_reclaimed` instead.
    """

    def __init__(
        self,
        store: CheckpointStore,
        reclaim: Reclaim,
        *,
        pod: str | None = None,
        clock: Clock = time.monotonic,
        wall_clock: Clock = time.time,
    ) -> None:
        self.store = store
        self.reclaim = reclaim
        self.status = StatusFile(store.directory)
        self._clock = clock
        self._wall_clock = wall_clock
        pod = pod or socket.gethostname()
        started = wall_clock()
        self.run = Run(
            run_id=f"{pod}-{os.getpid()}-{started:.6f}",
            pod=pod,
            started_at=started,
            grace_seconds=reclaim.grace_seconds,
        )
        self._last_status = clock()
        store.discard_partials()
        self._write_status()

    @classmethod
    def from_env(cls, keep: int = 3, environ: Mapping[str, str] = os.environ) -> Worker:
        """The worker of this pod: checkpoints in ``$CHECKPOINT_DIR/$JOB_COMPLETION_INDEX``, the
        reclaim handler installed for SIGTERM and SIGINT, the grace from DRAIN_WINDOW_SECONDS."""
        store = CheckpointStore(index_directory(environ), keep)
        pod = environ.get(POD_NAME_ENV) or environ.get("HOSTNAME")
        return cls(store, Reclaim.install(), pod=pod)

    def latest(self) -> Checkpoint | None:
        """The latest complete checkpoint, recorded as what this run resumes from."""
        latest = self.store.latest()
        self.run.resumed_from = latest.step if latest else None
        if latest:
            self.run.step = max(self.run.step, latest.step)
        self._write_status()
        return latest

    def steps(
        self, total: int | None, *, start: int = 0, every: int, save: Writer
    ) -> Iterator[int]:
        """Yield step numbers from ``start`` to ``total`` (None: until stopped). After each step
        the work is checkpointed every ``every`` steps and at the end; after a reclaim signal it
        is checkpointed at once and the process exits with 143 (:meth:`exit_reclaimed`), so at
        most one step's work is lost to a reclaim, and at most ``every`` to a crash."""
        if every < 1:
            raise ValueError(f"every={every}: checkpoint at least every step (every >= 1)")
        self.run.checkpoint_every = every
        step = start
        if self.reclaim.requested:  # the signal came while the program was loading
            self.checkpoint(step, save)
            self.exit_reclaimed()
        while total is None or step < total:
            yield step
            step += 1
            self.progress(step)
            if self.reclaim.requested:
                self.checkpoint(step, save)
                self.exit_reclaimed()
            if step % every == 0:
                self.checkpoint(step, save)
        if self.run.checkpointed_step != step:
            self.checkpoint(step, save)
        self.complete()

    def progress(self, step: int) -> None:
        """``step`` steps are done (written to the status file every few seconds at most)."""
        self.run.step = step
        if self._clock() - self._last_status >= STATUS_EVERY_SECONDS:
            self._write_status()

    def checkpoint(self, step: int, payload: bytes | Writer) -> Checkpoint:
        """Save ``step`` atomically, timing the save against the reclaim's deadline."""
        return self._timed(step, lambda: self.store.save(step, payload))

    def checkpoint_to_path(self, step: int, write: Callable[[Path], object]) -> Checkpoint:
        """:meth:`checkpoint` for a framework that writes to a path itself."""
        return self._timed(step, lambda: self.store.save_to_path(step, write))

    def _timed(self, step: int, save: Callable[[], Checkpoint]) -> Checkpoint:
        self.run.step = max(self.run.step, step)
        self.run.exit_reason = "saving"
        self.run.save_began_at = self._wall_clock()
        self._write_status()
        began = self._clock()
        saved = save()
        self.run.save_seconds = round(self._clock() - began, 6)
        self.run.checkpointed_step = step
        self.run.exit_reason = "running"
        left = self.reclaim.seconds_left()
        if left is not None:
            self.run.seconds_left_after_save = round(left, 6)
        self._write_status()
        return saved

    def exit_reclaimed(self) -> NoReturn:
        """Record the reclaim and exit with 128 + the signal: 143 for SIGTERM, never 0 (a 0
        would make the pod Succeeded and the Job count the cut-short index as done)."""
        self.run.exit_reason = "reclaimed"
        self.run.exit_code = self.reclaim.exit_code
        self._write_status()
        raise SystemExit(self.reclaim.exit_code)

    def complete(self) -> None:
        """Record that this index's work is all done (the process should then exit 0)."""
        self.run.exit_reason = "completed"
        self.run.exit_code = 0
        self._write_status()

    def _write_status(self) -> None:
        self.run.signal = self.reclaim.signal_name
        self.run.signal_at = self.reclaim.received_at
        self.run.updated_at = self._wall_clock()
        self._last_status = self._clock()
        self.status.record(self.run)


def helper_ignores_reclaim(*_: object) -> None:
    """Make this (helper) process ignore SIGTERM and SIGINT: a data-loader worker that died at
    the signal would break the main process's last steps and its checkpoint. Pass it as a
    DataLoader's ``worker_init_fn``; the main process stops its helpers when it exits."""
    import signal

    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
