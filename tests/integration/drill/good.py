"""Keeps the contract with together_worker: resumes, checkpoints every 5 steps and on SIGTERM,
exits 143."""

import time

from together_worker import Worker

worker = Worker.from_env()
latest = worker.latest()
count = {"n": int(latest.read_bytes()) if latest else 0}
start = latest.step if latest else 0
for _ in worker.steps(30, start=start, every=5, save=lambda f: f.write(str(count["n"]).encode())):
    time.sleep(0.5)
    count["n"] += 1
