"""The resources a policy looks at, as plain dicts in one shape (`Res`), whichever host or library
declared them, so each check is written once."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from together_policy.provider import (
    CLUSTER_TOKEN,
    CLUSTER_TYPE,
    VOLUME_TOKEN,
    VOLUME_TYPE,
    Unknown,
    counts,
)

CLUSTER_TYPES: Final = frozenset({CLUSTER_TYPE, CLUSTER_TOKEN})
VOLUME_TYPES: Final = frozenset({VOLUME_TYPE, VOLUME_TOKEN})

# The engine's sentinels for values not known during preview (one per value kind).
UNKNOWN_SENTINELS: Final = frozenset(
    {
        "1c4a061d-8072-4f0a-a4cb-0ff528b18fe7",
        "3eeb2bf0-c639-47a8-9e75-3b44932eb421",
        "04da6b54-80e4-46f7-96ec-b56ff0331ba9",
        "6a19a0b0-7e62-4c92-b797-7f8e31da9cc2",
        "030794c1-ac77-496b-92df-f27374a8bd58",
        "e48ece36-62e2-4504-bad9-02848725956a",
        "dd056dcd-154b-4c76-9bd3-c8f88648b5ff",
    }
)

POD: Final = "kubernetes:core/v1:Pod"
DEPLOYMENT: Final = "kubernetes:apps/v1:Deployment"
STATEFUL_SET: Final = "kubernetes:apps/v1:StatefulSet"
JOB: Final = "kubernetes:batch/v1:Job"
CRON_JOB: Final = "kubernetes:batch/v1:CronJob"
POD_DISRUPTION_BUDGET: Final = "kubernetes:policy/v1:PodDisruptionBudget"
WORKLOAD_TYPES: Final = frozenset({POD, DEPLOYMENT, STATEFUL_SET, JOB, CRON_JOB})


def with_unknowns(value: Any) -> Any:
    """`value` (plain JSON) with every unknown sentinel replaced by `Unknown.VALUE`, and whole
    numbers as ints: the engine sends every number as a float (600.0), while the provider's checks
    read counts and seconds as ints, as a program writes them."""
    if isinstance(value, str) and value in UNKNOWN_SENTINELS:
        return Unknown.VALUE
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, Mapping):
        return {str(k): with_unknowns(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [with_unknowns(v) for v in value]
    return value


@dataclass(frozen=True)
class Res:
    """One resource as a policy sees it: type token, URN, name and input properties. `depends_on`
    maps a property to the URNs it came from. Unknown values (computed by another resource) arrive
    as the engine's sentinel strings; `props` holds `Unknown.VALUE` in their place
    (`with_unknowns`), which the provider's rules already skip."""

    type: str
    urn: str
    name: str
    props: Mapping[str, Any]
    depends_on: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def is_cluster(self) -> bool:
        return self.type in CLUSTER_TYPES

    @property
    def is_volume(self) -> bool:
        return self.type in VOLUME_TYPES

    @property
    def is_workload(self) -> bool:
        return self.type in WORKLOAD_TYPES

    @property
    def label(self) -> str:
        """How a message names the resource: its kind and its name in the program."""
        return f"{self.type.rsplit(':', 1)[-1]} '{self.name}'"


def _snake(name: str) -> str:
    return name if name.startswith("__") else re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


def snake_inputs(res: Res) -> dict[str, Any]:
    """A Together resource's inputs in the snake_case the rules read, from either host: the
    dynamic provider's (`pulumi-python:dynamic/together:Cluster`, snake_case plus host keys such
    as `__provider`, dropped) or the native plugin's (`together:index:Cluster`, camelCase)."""
    return {_snake(k): v for k, v in res.props.items() if not k.startswith("__")}


def snake_depends_on(res: Res) -> dict[str, tuple[str, ...]]:
    return {_snake(k): v for k, v in res.depends_on.items()}


def clusters(resources: Iterable[Res]) -> list[Res]:
    return [r for r in resources if r.is_cluster]


def preemptible_target(cluster: Res) -> int | None:
    """The cluster's preemptible target (0 when absent: the field's default); None if unknown or
    not a count (8.5), as the provider's rules read it."""
    return counts(snake_inputs(cluster)).preemptible.floor


def has_preemptible_capacity(cluster: Res) -> bool:
    """A target (or the ceiling of a range) above 0, or one not known yet (a preview cannot rule
    it out)."""
    target = counts(snake_inputs(cluster)).preemptible.top
    return target is None or target > 0
