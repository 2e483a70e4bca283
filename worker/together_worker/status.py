"""The worker's progress in a small JSON file next to its checkpoints, written atomically, so the
drill (or anyone with access to the volume) can see what each pod did with its reclaim."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Final

from together_worker.checkpoints import PARTIAL_PREFIX, write_atomically

STATUS_FILE: Final = "status.json"
KEEP_RUNS: Final = 50
"""Runs (one per pod of the index) the file keeps, the newest last."""


@dataclass
class Run:
    """What one pod of an index did. Times are wall-clock epoch seconds; ``save_seconds`` is the
    last save's duration and ``seconds_left_after_save`` what remained of the grace period when
    the save after the reclaim signal ended (negative: it ended after the deadline)."""

    run_id: str
    pod: str
    started_at: float
    grace_seconds: float
    resumed_from: int | None = None
    step: int = 0
    checkpointed_step: int | None = None
    checkpoint_every: int | None = None
    signal: str | None = None
    signal_at: float | None = None
    exit_reason: str = "running"
    """running, saving (a save was in progress when this was written), reclaimed, completed."""
    exit_code: int | None = None
    save_seconds: float | None = None
    save_began_at: float | None = None
    """When the last save began: after ``signal_at``, it is the save the reclaim asked for."""
    seconds_left_after_save: float | None = None
    updated_at: float = 0.0


class StatusFile:
    """``status.json`` in an index's checkpoint directory: ``{"runs": [Run, ...]}``."""

    def __init__(self, directory: Path | str) -> None:
        self.path = Path(directory) / STATUS_FILE

    def runs(self) -> list[dict[str, Any]]:
        """Every run recorded, oldest first (none when the file does not exist yet)."""
        try:
            data = json.loads(self.path.read_text())
        except FileNotFoundError:
            return []
        runs = data.get("runs", []) if isinstance(data, dict) else []
        return [r for r in runs if isinstance(r, dict)]

    def record(self, run: Run) -> None:
        """Replace this run's entry (or add it), atomically."""
        runs = [r for r in self.runs() if r.get("run_id") != run.run_id]
        runs.append(asdict(run))
        data = json.dumps({"runs": runs[-KEEP_RUNS:]}, indent=1).encode()
        partial = self.path.with_name(f"{PARTIAL_PREFIX}{STATUS_FILE}-{os.getpid()}")
        write_atomically(self.path, data, partial)
