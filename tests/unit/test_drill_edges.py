"""The drill's edges: its constants as behaviour (what `mutate/constants.py` mutates: which names
are a save being written, the exit codes docs/drill.md promises, the kill that is the kubelet's,
the second of slack at the grace end) and the bounds of "resumed"."""

from __future__ import annotations

from dataclasses import replace

import pytest

from together_drill.evidence import temporary
from together_drill.targets import random_due
from together_drill.verdict import (
    COULD_NOT_DRILL,
    Code,
    Outcome,
    PodSeen,
    Save,
    Verdict,
    pod_problems,
)


@pytest.mark.parametrize(
    "name", ["0/state.tmp", "0/model.partial", "0/model.part", "0/model.ckpt~", "0/.hidden"]
)
def test_every_temporary_name_is_a_save_being_written(name: str) -> None:
    assert temporary(name)


@pytest.mark.parametrize("name", ["0/model.ckpt", "0/partial.ckpt", "0/tmp", "0/part"])
def test_final_names_are_not(name: str) -> None:
    assert not temporary(name)


@pytest.mark.parametrize(
    ("outcome", "code"), [(Outcome.SAFE, 0), (Outcome.UNSAFE, 1), (Outcome.UNVERIFIED, 3)]
)
def test_the_exit_codes_docs_drill_promises(outcome: Outcome, code: int) -> None:
    assert Verdict(outcome, True, ()).exit_code == code
    assert COULD_NOT_DRILL == 2


POD = PodSeen(
    pod="p",
    node="n",
    index="0",
    grace_seconds=300,
    sigterm_delivered=True,
    exit_code=137,
    sigterm_to_exit_seconds=300.0,
    counted_success=False,
    save=Save.CUT_SHORT,
    save_source="status.json",
    saving_when_killed=True,
)


def test_137_is_the_kubelets_kill_and_136_is_not() -> None:
    assert POD.forced_kill and not replace(POD, exit_code=136).forced_kill
    assert not replace(POD, exit_code=138).forced_kill


@pytest.mark.parametrize(
    ("took", "code"),
    [
        (299.0, Code.SIGTERM_IGNORED),  # within the one second of slack: the grace end
        (298.5, Code.SAVE_CUT_SHORT),  # earlier: something else killed it
    ],
)
def test_one_second_before_the_grace_end_still_counts_as_its_end(took: float, code: Code) -> None:
    (problem,) = pod_problems(replace(POD, sigterm_to_exit_seconds=took), 300.0)
    assert problem.code is code


@pytest.mark.parametrize(
    ("checkpointed", "resumed_from", "resumed"),
    [
        (1, None, False),  # a checkpoint at step 1, the next pod started from scratch
        (None, None, True),  # no checkpoint: starting from scratch loses nothing saved
        (None, 0, True),
        (5, 5, True),
        (5, 4, False),
    ],
)
def test_resumed_is_from_the_last_checkpoint_or_later(
    checkpointed: int | None, resumed_from: int | None, resumed: bool
) -> None:
    pod = replace(
        POD,
        uses_library=True,
        checkpointed_step=checkpointed,
        next_pod="p-2",
        next_resumed_from=resumed_from,
    )
    assert pod.resumed is resumed


class _Bound:
    """An rng whose `uniform` answers one end of its range: the earliest or the latest reclaim."""

    def __init__(self, end: int) -> None:
        self.end = end

    def uniform(self, low: float, high: float) -> float:
        return (low, high)[self.end]


def test_a_random_reclaim_comes_2_to_12_seconds_after_the_latest_pod_started() -> None:
    now = {"n1": [("a", 100.0)], "n2": [("b", 103.0), ("c", 101.0)]}
    assert random_due(now, _Bound(0)) == 105.0  # type: ignore[arg-type]
    assert random_due(now, _Bound(1)) == 115.0  # type: ignore[arg-type]
