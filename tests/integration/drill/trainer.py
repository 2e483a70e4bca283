"""A trainer without together_worker: resumes from state.json, and on SIGTERM saves it the
atomic way (state.json.tmp, fsync, rename) taking SAVE_SECONDS, then exits 143. How long the
save takes is what a launcher's early kill cuts short."""

import json
import os
import signal
import sys
import time

directory = os.path.join(os.environ["CHECKPOINT_DIR"], os.environ.get("JOB_COMPLETION_INDEX", "0"))
os.makedirs(directory, exist_ok=True)
state = os.path.join(directory, "state.json")
save_seconds = float(os.environ.get("SAVE_SECONDS", "0"))
step = 0
if os.path.exists(state):
    with open(state) as saved:
        step = json.load(saved)["step"]
stop = False


def on_term(*_: object) -> None:
    global stop
    stop = True


def save() -> None:
    partial = state + ".tmp"
    with open(partial, "w") as file:
        for _ in range(int(save_seconds * 10)):  # slowly, as a big model's state is written
            file.write(" " * 1024)
            file.flush()
            time.sleep(0.1)
        file.write(json.dumps({"step": step}))
        file.flush()
        os.fsync(file.fileno())
    os.replace(partial, state)


signal.signal(signal.SIGTERM, on_term)
print("trainer up at step", step, flush=True)
while step < 40:
    time.sleep(0.5)
    step += 1
    if stop:
        save()
        sys.exit(143)
save_seconds = 0
save()
