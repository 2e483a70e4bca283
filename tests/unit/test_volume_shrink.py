"""The one rule of a SharedVolume's size (`volume/rules.py`): a volume only grows. Each edge of
the rule and every word of its error, so a mutant of either fails here."""

from __future__ import annotations

from typing import Any

import pytest

from together_provider.volume import rules as volume_rules

PROPS: dict[str, Any] = {"volume_name": "ckpt", "region": "us-central-8", "size_tib": 4.0}


def _reasons(size: float) -> list[str]:
    old, failures = volume_rules.RULEBOOK.check_inputs("ckpt", PROPS, None)
    assert failures == []
    return [
        f.reason for f in volume_rules.RULEBOOK.validate("ckpt", {**PROPS, "size_tib": size}, old)
    ]


@pytest.mark.parametrize("size", [4.0, 5.0, 40.0])
def test_the_same_size_or_a_larger_one_is_no_shrink(size: float) -> None:
    assert _reasons(size) == []


def test_one_tib_less_is_a_shrink_and_its_error_says_every_word() -> None:
    assert _reasons(3.0) == [
        "volume 'ckpt': size_tib 4 -> 3 would shrink the volume; Together volumes only grow "
        "(shrinking needs a Together support request), so keep size_tib >= 4, or replace the "
        "volume (e.g. change volume_name) to start a smaller, empty one"
    ]
