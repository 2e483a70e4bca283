"""`SimulatorProcess.mirrored` is a barrier with a frozen clock: it waits for two more complete
passes than it saw, not only for a pass over the current simulated time (which, with the clock
frozen, an earlier pass already reports). Driven by a scripted status, no simulator."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from testkit.sim import SimulatorProcess


def test_mirrored_waits_for_two_more_passes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    process = SimulatorProcess(tmp_path)
    passes = iter(range(5, 100))
    asked: list[int] = []

    def status() -> dict[str, dict[str, Any]]:
        asked.append(count := next(passes))
        return {"c": {"mirrored_at": 60.0, "passes": count}}  # frozen: always caught up

    monkeypatch.setattr(process, "now", lambda: 60.0)
    monkeypatch.setattr(process, "kubernetes_status", status)
    monkeypatch.setattr("testkit.wait.time.sleep", lambda seconds: None)
    process.mirrored("c")
    assert asked == [5, 6, 7]  # seen 5 at the call, returned once 7 had finished
