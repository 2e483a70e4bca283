"""A dynamic resource whose output is only known after create: unknown during preview."""

from typing import Any

import pulumi
from pulumi.dynamic import CreateResult, Resource, ResourceProvider


class NameSourceProvider(ResourceProvider):
    def create(self, props: dict[str, Any]) -> CreateResult:
        return CreateResult("name-1", {"value": props["prefix"] + "-cluster"})


class NameSource(Resource):
    value: pulumi.Output[str]

    def __init__(self, name: str, prefix: str) -> None:
        super().__init__(NameSourceProvider(), name, {"prefix": prefix, "value": None})
