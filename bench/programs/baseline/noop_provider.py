"""A dynamic provider that does nothing: the floor under any dynamic provider's engine cost.

In an importable module (pickled by reference), like the Cluster provider, so both stacks pay the
same provider-process start-up and differ only in what the provider does.
"""

from __future__ import annotations

from typing import Any

from pulumi.dynamic import (
    CheckResult,
    CreateResult,
    DiffResult,
    ReadResult,
    Resource,
    ResourceProvider,
    UpdateResult,
)


class NoopProvider(ResourceProvider):
    def check(self, olds: dict[str, Any], news: dict[str, Any]) -> CheckResult:
        return CheckResult(news, [])

    def diff(self, id_: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        return DiffResult(changes=olds.get("value") != news.get("value"))

    def create(self, props: dict[str, Any]) -> CreateResult:
        return CreateResult(f"noop-{props['value']}", dict(props))

    def update(self, id_: str, olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        return UpdateResult(dict(news))

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        return ReadResult(id_, props)

    def delete(self, id_: str, props: dict[str, Any]) -> None:
        return None


class Noop(Resource, module="bench", name="Noop"):
    def __init__(self, name: str, value: str) -> None:
        super().__init__(NoopProvider(), name, {"value": value})
