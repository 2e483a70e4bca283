"""The real-node bench's verdicts (bench/real_nodes.py): issue 42's targets are judged on the
slowest real node, never on a KWOK node, and each says met or not beside the figure before."""

from __future__ import annotations

from typing import Any

import pytest

from bench.real_nodes import against_targets


def _row(kind: str, ready: float, sigterm: float | None, memory: float) -> dict[str, Any]:
    return {
        "kind": kind,
        "start_to_ready_s": ready,
        "reclaim_to_sigterm_s": sigterm,
        "memory_mib": memory,
    }


@pytest.mark.parametrize(
    ("rows", "expected"),
    [
        (
            [_row("real", 2.1, None, 150.2), _row("real", 2.9, 0.31, 149.0)],
            ["**2.9 s** (target at most 3.0 s: met; before: 3.93 s)",
             "**0.31 s** (target at most 0.5 s: met; before: 0.596 s)",
             "**150.2 MiB** (target at most 200.0 MiB: met; before: 155.0 MiB)"],
        ),
        (
            [_row("real", 3.0, 0.5, 200.0), _row("kwok", 9.0, 0.9, 900.0)],
            ["**3.0 s** (target at most 3.0 s: met", "**0.5 s** (target at most 0.5 s: met",
             "**200.0 MiB** (target at most 200.0 MiB: met"],
        ),
        (
            [_row("real", 3.01, 0.51, 200.1)],
            ["**3.01 s** (target at most 3.0 s: **not met**",
             "**0.51 s** (target at most 0.5 s: **not met**",
             "**200.1 MiB** (target at most 200.0 MiB: **not met**"],
        ),
        (
            [_row("kwok", 0.1, 0.6, 50.0)],
            ["start -> Ready: no real node measured", "reclaim -> SIGTERM: no real node measured",
             "memory per node: no real node measured"],
        ),
    ],
)  # fmt: skip
def test_each_target_is_judged_on_the_slowest_real_node(
    rows: list[dict[str, Any]], expected: list[str]
) -> None:
    lines = against_targets(rows)
    assert len(lines) == len(expected)
    for line, part in zip(lines, expected, strict=True):
        assert part in line, line
