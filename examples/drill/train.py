"""A toy training loop that keeps the drain-window contract with together_worker: it resumes
from its latest checkpoint, checkpoints every 5 steps and on SIGTERM, and exits 143. Standard
library and together_worker only; 60 steps of 0.5 s."""

import time
from typing import BinaryIO

from together_worker import Worker

worker = Worker.from_env()
latest = worker.latest()
done = {"steps": int(latest.read_bytes()) if latest else 0}
print(f"resuming from step {latest.step}" if latest else "starting afresh", flush=True)


def save(file: BinaryIO) -> None:
    file.write(str(done["steps"]).encode())


for _ in worker.steps(60, start=latest.step if latest else 0, every=5, save=save):
    time.sleep(0.5)
    done["steps"] += 1
print("trained", flush=True)
