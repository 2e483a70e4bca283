"""A tiny dynamic provider in an importable module (pickled by reference).

It proves the engine end to end: counts normalised to int at every hook (the engine turns the ints
that check returns back into floats on the wire before create and update see them), every output
returned from update (no wiped outputs), read for refresh, and delete.
"""

from __future__ import annotations

import time
from typing import Any

import pulumi
from pulumi import dynamic


def _normalise(props: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in props.items() if not k.startswith("__")}
    count = out["count"]
    if isinstance(count, float) and count.is_integer():
        out["count"] = int(count)
    return out


def _seen(props: dict[str, Any]) -> dict[str, Any]:
    return {**props, "seen_type": type(props["count"]).__name__}


class CounterProvider(dynamic.ResourceProvider):
    def check(self, olds: dict[str, Any], news: dict[str, Any]) -> dynamic.CheckResult:
        return dynamic.CheckResult(_normalise(news), [])

    def diff(self, id_: str, olds: dict[str, Any], news: dict[str, Any]) -> dynamic.DiffResult:
        return dynamic.DiffResult(changes=_normalise(olds)["count"] != _normalise(news)["count"])

    def create(self, props: dict[str, Any]) -> dynamic.CreateResult:
        return dynamic.CreateResult(
            "counter-1", {**_seen(_normalise(props)), "created_at": time.time()}
        )

    def update(self, id_: str, olds: dict[str, Any], news: dict[str, Any]) -> dynamic.UpdateResult:
        kept = {k: v for k, v in olds.items() if not k.startswith("__")}
        return dynamic.UpdateResult({**kept, **_seen(_normalise(news))})

    def read(self, id_: str, props: dict[str, Any]) -> dynamic.ReadResult:
        return dynamic.ReadResult(id_, props)

    def delete(self, id_: str, props: dict[str, Any]) -> None:
        return None


class Counter(dynamic.Resource):
    count: pulumi.Output[int]
    seen_type: pulumi.Output[str]
    created_at: pulumi.Output[float]

    def __init__(self, name: str, count: pulumi.Input[int]) -> None:
        super().__init__(
            CounterProvider(),
            name,
            {"count": count, "seen_type": None, "created_at": None},
        )
