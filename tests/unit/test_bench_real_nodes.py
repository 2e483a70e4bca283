"""The real-node bench's comparison with the figures before issue 42's speed-up: the slowest real
node of a run against the previous figure and the target."""

from __future__ import annotations

from typing import Any

from bench.real_nodes import PREVIOUS, TARGETS, against_previous, markdown


def _row(kind: str, ready: float, sigterm: float | None, memory: float) -> dict[str, Any]:
    return {
        "node": f"n-{kind}-{ready}",
        "kind": kind,
        "start_to_ready_s": ready,
        "node_start_s": None,
        "pod_start_s": 0.5,
        "memory_mib": memory,
        "reclaim_to_sigterm_s": sigterm,
    }


def test_the_slowest_real_node_is_compared_and_kwok_nodes_are_not() -> None:
    rows = [
        _row("real", 2.5, None, 150.0),
        _row("real", 3.2, 0.4, 140.0),
        _row("kwok", 0.1, 0.9, 300.0),  # a KWOK node's figures never count
    ]
    found = {c["figure"]: c for c in against_previous(rows)}
    assert found["start_to_ready_s"] == {
        "figure": "start_to_ready_s", "now": 3.2, "previous": PREVIOUS["start_to_ready_s"],
        "target": TARGETS["start_to_ready_s"], "met": False,
    }  # fmt: skip
    assert found["reclaim_to_sigterm_s"]["now"] == 0.4
    assert found["reclaim_to_sigterm_s"]["met"] is True
    assert found["memory_mib"]["now"] == 150.0
    assert found["memory_mib"]["met"] is True


def test_a_figure_at_its_target_meets_it_and_one_no_real_node_measured_is_left_out() -> None:
    rows = [_row("real", TARGETS["start_to_ready_s"], None, TARGETS["memory_mib"])]
    found = {c["figure"]: c for c in against_previous(rows)}
    assert set(found) == {"start_to_ready_s", "memory_mib"}
    assert all(c["met"] for c in found.values())


def test_the_report_shows_each_figure_beside_the_previous_one_and_the_load() -> None:
    rows = [_row("real", 2.5, 0.6, 150.0)]
    found = {"nodes": rows, "against_previous": against_previous(rows), "load_average": [1.5, 2]}
    text = "\n".join(markdown(found))
    previous = PREVIOUS["reclaim_to_sigterm_s"]
    assert f"| reclaim_to_sigterm_s | 0.6 | {previous} | at most 0.5 | no |" in text
    assert "| start_to_ready_s | 2.5 |" in text
    assert "1.5, 2" in text
