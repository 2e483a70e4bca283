"""Which node a reclaim takes, from what the pod watch saw, with no cluster: one node running a
live pod of the Job at that moment, chosen once, never an ended or deleting pod."""

from __future__ import annotations

import random
from typing import Any

from together_drill.targets import choose, ended_early, random_due, running_now, starting


def _pod(name: str, node: str, state: str = "running", **metadata: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": name, **metadata},
        "spec": {"nodeName": node},
        "status": {"containerStatuses": [{"state": {state: {}}}]},
    }


def test_only_live_pods_count_and_their_latest_version_decides() -> None:
    seen = [
        (1.0, _pod("a", "n1")),
        (2.0, _pod("b", "n2")),
        (3.0, _pod("c", "n3")),
        (4.0, _pod("a", "n1", "terminated")),  # ended since: never picked
        (5.0, _pod("b", "n2", deletionTimestamp="x")),  # being deleted: never picked
        (6.0, {**_pod("d", "n4"), "_event": "DELETED"}),  # gone
        (7.0, _pod("e", "n3")),
        (8.0, _pod("f", "n5", "waiting")),  # not running yet
    ]
    assert running_now(seen) == {"n3": [("c", 3.0), ("e", 7.0)]}
    assert running_now(seen, eligible={"n1", "n2"}) == {}


def test_one_node_is_chosen_once_with_all_its_live_pods() -> None:
    now = {"n1": [("a", 1.0)], "n3": [("e", 7.0), ("c", 3.0)]}
    picks = [choose(now, random.Random(seed)) for seed in range(20)]
    assert {(node, tuple(pods)) for node, pods in filter(None, picks)} == {
        ("n1", ("a",)),
        ("n3", ("c", "e")),
    }
    assert choose({}, random.Random(1)) is None


def test_a_random_reclaim_is_due_2_to_12_s_into_the_latest_pods_run() -> None:
    now = {"n1": [("a", 10.0)], "n2": [("b", 30.0)]}
    dues = [random_due(now, random.Random(seed)) for seed in range(50)]
    assert all(32.0 <= due <= 42.0 for due in dues)


def test_a_job_that_ended_early_is_one_sentence_naming_the_fix() -> None:
    text = ended_early("train", 41.96, 2, 3, 50.0, "Complete")
    assert text == (
        "Job train ended (Complete) at +42.0 s, before reclaim 2 of 3 was due (due at +50.0 s), "
        "so there was nothing left to reclaim: give fewer --reclaims, earlier --at times, or a "
        "workload that runs longer"
    )
    assert text.count(". ") == 0
    unknown = ended_early("train", 41.96, 1, 1, None, "Failed: BackoffLimitExceeded")
    assert "before reclaim 1 of 1 was due, so there was nothing" in unknown  # no time to show


def test_how_a_job_ended_is_read_from_its_conditions_with_or_without_a_reason() -> None:
    """A Failed condition with no reason (the API allows it) is still a failure, named "Failed";
    a Complete Job or a running one has no failure."""
    from together_drill.run import _State

    def state(*conditions: dict[str, str]) -> _State:
        return _State({"conditions": list(conditions)}, {}, 0.0)

    limit = "BackoffLimitExceeded"
    failed = state({"type": "Failed", "status": "True", "reason": limit})
    assert (failed.ended, failed.failure) == (f"Failed: {limit}", limit)
    bare = state({"type": "Failed", "status": "True"})
    assert (bare.ended, bare.failure) == ("Failed", "Failed")
    done = state({"type": "Complete", "status": "True", "reason": "Completed"})
    assert (done.ended, done.failure) == ("Complete: Completed", None)
    running = state({"type": "Failed", "status": "False"})
    assert (running.ended, running.failure) == (None, None)


def test_pods_still_starting_on_a_node_are_waited_for() -> None:
    """A gang's second pod placed on the node but not running yet would go with the node
    unseen: the node is no reclaim's until it runs."""
    pending = _pod("b", "n1", "waiting")
    pending["status"]["phase"] = "Pending"
    latest = {
        "a": _pod("a", "n1"),
        "b": pending,
        "c": _pod("c", "n2", "waiting"),  # another node
        "d": _pod("d", "n1", "waiting", deletionTimestamp="x"),  # ending
        "e": {**_pod("e", "n1", "waiting"), "_event": "DELETED"},
        "f": {**_pod("f", "n1", "terminated"), "status": {"phase": "Failed"}},
        "g": _pod("g", "n1", "waiting"),  # no phase yet: starting
        "h": {"metadata": {"name": "h"}, "spec": {"nodeName": "n1"}},  # no status yet
        "i": {"metadata": {"name": "i"}, "spec": {}},  # not placed yet: on no node
    }
    assert sorted(n for n, pod in latest.items() if starting(pod)) == ["b", "c", "g", "h"]
    assert running_now([(1.0, _pod("a", "n1")), (2.0, _pod("x", "n3"))]) == {
        "n1": [("a", 1.0)],
        "n3": [("x", 2.0)],
    }
    for name in ("b", "g", "h"):  # any one pod starting on n1 holds n1 back, never n3
        seen = [(1.0, _pod("a", "n1")), (2.0, _pod("x", "n3")), (3.0, latest[name])]
        assert running_now(seen) == {"n3": [("x", 2.0)]}
    ran = [(1.0, _pod("a", "n1")), (2.0, pending), (3.0, _pod("b", "n1"))]
    assert running_now(ran) == {"n1": [("a", 1.0), ("b", 3.0)]}  # once it runs, both go
    others = [(1.0, _pod("a", "n1")), *((2.0, latest[n]) for n in ("d", "e", "f", "i"))]
    assert running_now(others) == {"n1": [("a", 1.0)]}
