"""A stand-in for torchrun (and accelerate, and a process supervisor's stop timeout): runs the
trainer as a child, forwards SIGTERM to it, SIGKILLs it SHUTDOWN_TIMEOUT seconds later if it is
still running (torchrun's --shutdown-timeout, 30 s by default), and exits 1 when the trainer
failed (torchrun's ChildFailedError), whatever the pod's grace period."""

import os
import signal
import subprocess
import sys
import time

timeout = float(os.environ.get("SHUTDOWN_TIMEOUT", "30"))
child = subprocess.Popen([sys.executable, "-u", *sys.argv[1:]])
stop = False


def on_term(*_: object) -> None:
    global stop
    stop = True  # the loop below acts: Popen's own lock must not be taken inside a handler


signal.signal(signal.SIGTERM, on_term)
while child.poll() is None and not stop:
    time.sleep(0.05)
if stop:
    child.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while child.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    if child.poll() is None:
        child.kill()
        child.wait()
    sys.exit(1)
sys.exit(0 if child.returncode == 0 else 1)
