"""A clock and a sleep that only move when the code under test sleeps: timing tests never wait."""

from __future__ import annotations


class FakeTime:
    def __init__(self, start: float = 0.0) -> None:
        self.now = start
        self.sleeps: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds

    def clock(self) -> float:
        return self.now
