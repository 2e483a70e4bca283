"""One trial of the sweep: a toy training loop that keeps the drain-window contract with
together_worker (resume, checkpoint every N steps and on SIGTERM, exit 143), standard library only.

Index i of the Job trains with learning rate LEARNING_RATES[i % len]; ``TRIAL_STEPS`` steps of
``TRIAL_STEP_SECONDS`` each (a real trial would run a framework's step there), checkpointing
every ``TRIAL_CHECKPOINT_EVERY`` steps to $CHECKPOINT_DIR/$JOB_COMPLETION_INDEX.
"""

from __future__ import annotations

import json
import os
import time
from typing import BinaryIO

from together_worker import Worker

LEARNING_RATES = (0.1, 0.03, 0.01, 0.003)


def main() -> None:
    worker = Worker.from_env()
    steps = int(os.environ.get("TRIAL_STEPS", "600"))
    step_seconds = float(os.environ.get("TRIAL_STEP_SECONDS", "1"))
    every = int(os.environ.get("TRIAL_CHECKPOINT_EVERY", "30"))
    index = int(os.environ.get("JOB_COMPLETION_INDEX", "0"))
    latest = worker.latest()
    state = (
        json.loads(latest.read_bytes())
        if latest
        else {"lr": LEARNING_RATES[index % len(LEARNING_RATES)], "loss": 1.0}
    )
    start = latest.step if latest else 0
    print(f"trial {index}: lr={state['lr']}, from step {start} of {steps}", flush=True)

    def save(file: BinaryIO) -> None:
        file.write(json.dumps(state).encode())

    for _ in worker.steps(steps, start=start, every=every, save=save):
        time.sleep(step_seconds)
        state["loss"] *= 1 - state["lr"] / 10
    print(f"trial {index}: done, loss {state['loss']:.4f}", flush=True)


if __name__ == "__main__":
    main()
