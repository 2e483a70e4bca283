"""A dynamic provider that does nothing: the floor under any dynamic provider's engine cost.

In an importable module (pickled by reference), like the Cluster provider, so both stacks pay the
same provider-process start-up and differ only in what the provider does.
"""

from __future__ import annotations

from typing import Any

from pulumi import dynamic


class NoopProvider(dynamic.ResourceProvider):
    def check(self, olds: dict[str, Any], news: dict[str, Any]) -> dynamic.CheckResult:
        return dynamic.CheckResult(news, [])

    def diff(self, id_: str, olds: dict[str, Any], news: dict[str, Any]) -> dynamic.DiffResult:
        return dynamic.DiffResult(changes=olds.get("value") != news.get("value"))

    def create(self, props: dict[str, Any]) -> dynamic.CreateResult:
        return dynamic.CreateResult(f"noop-{props['value']}", dict(props))

    def update(self, id_: str, olds: dict[str, Any], news: dict[str, Any]) -> dynamic.UpdateResult:
        return dynamic.UpdateResult(dict(news))

    def read(self, id_: str, props: dict[str, Any]) -> dynamic.ReadResult:
        return dynamic.ReadResult(id_, props)

    def delete(self, id_: str, props: dict[str, Any]) -> None:
        return None


class Noop(dynamic.Resource, module="bench", name="Noop"):
    def __init__(self, name: str, value: str) -> None:
        super().__init__(NoopProvider(), name, {"value": value})
