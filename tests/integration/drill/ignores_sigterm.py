"""Ignores SIGTERM (a library that masks it, a busy loop in C): killed at the end of the grace."""

import signal
import time

signal.signal(signal.SIGTERM, signal.SIG_IGN)
for _ in range(40):
    time.sleep(0.5)
