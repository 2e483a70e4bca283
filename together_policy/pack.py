"""The pack's policies (name, description, default level, check), declared without `pulumi_policy`
so the tests, the docs and the pack (`policy/__main__.py`) read one list."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final, Literal

from together_policy import clusters, workloads
from together_policy.resources import Res
from together_policy.workloads import CRITICAL_LABEL, Violation

PACK_NAME: Final = "together-preemptible"

Level = Literal["advisory", "mandatory", "disabled"]
ResourceCheck = Callable[[Res], list[Violation]]
StackCheck = Callable[[list[Res], Mapping[str, Any]], list[Violation]]


@dataclass(frozen=True)
class PolicySpec:
    """One policy. A *resource* policy (``resource_check``) runs as each resource is registered,
    so a mandatory one stops `pulumi up` before the resource's provider is called; a *stack*
    policy (``stack_check``) needs other resources (a budget, a PodDisruptionBudget, a cluster's
    target) and runs once every resource is registered. ``level`` is the default: a stack's
    `policy/config/<stack>.json` may set another, and the budget caps."""

    name: str
    description: str
    level: Level
    resource_check: ResourceCheck | None = None
    stack_check: StackCheck | None = None
    config: Mapping[str, Any] = field(default_factory=dict)
    """JSON-schema properties of the policy's config (besides `enforcementLevel`)."""


def _budget(resources: list[Res], config: Mapping[str, Any]) -> list[Violation]:
    return clusters.budget(resources, clusters.Budget.from_config(config))


def _reservation_end(resources: list[Res], config: Mapping[str, Any]) -> list[Violation]:
    days = config.get(clusters.MIN_DAYS_LEFT, clusters.DEFAULT_MIN_DAYS_LEFT)
    return clusters.reservation_ends_soon(resources, float(days), datetime.now(UTC))


def _stack(check: Callable[[Iterable[Res]], list[Violation]]) -> StackCheck:
    return lambda resources, _config: check(resources)


POLICIES: Final[tuple[PolicySpec, ...]] = (
    PolicySpec(
        "cluster-provider-rules",
        "A Together cluster (dynamic or native provider) passes the provider's own rules: at "
        "least one 8-GPU standard node, GPU counts in multiples of 8, no preemptible target on "
        "Slurm, a project for a preemptible target.",
        "mandatory",
        resource_check=clusters.cluster_rules,
    ),
    PolicySpec(
        "drain-window-grace-period",
        "A pod that can land on a preemptible node has terminationGracePeriodSeconds <= 300, "
        "the drain window after which Together removes a reclaimed node.",
        "mandatory",
        resource_check=workloads.grace_period,
    ),
    PolicySpec(
        "critical-workload-off-preemptible",
        f'A workload labelled {CRITICAL_LABEL}: "true" (on the workload or its pod template) '
        "cannot select or land on preemptible nodes.",
        "mandatory",
        resource_check=workloads.critical_off_preemptible,
    ),
    PolicySpec(
        "preemptible-job-checkpoints",
        "A Job or CronJob on preemptible nodes has a podFailurePolicy that ignores "
        "DisruptionTarget and mounts a durable checkpoint volume.",
        "mandatory",
        resource_check=workloads.preemptible_job_checkpoints,
    ),
    PolicySpec(
        "preemptible-job-shell-wrapper",
        "A Job or CronJob on preemptible nodes does not wrap its work in a shell (sh -c with "
        "several commands and no exec) that, as PID 1, would keep SIGTERM from it; the fix is "
        "the launcher, python -m together_worker run -- CMD.",
        "advisory",
        resource_check=workloads.preemptible_job_shell_wrapper,
    ),
    PolicySpec(
        "disruption-budget-off-preemptible",
        "A workload whose pods a PodDisruptionBudget selects is critical: it cannot select or "
        "land on preemptible nodes.",
        "mandatory",
        stack_check=_stack(workloads.disruption_budget_off_preemptible),
    ),
    PolicySpec(
        "compute-class-constraint",
        "On a stack with a preemptible target, every workload constrains its compute class "
        "(preemptible, or kept off preemptible).",
        "advisory",
        stack_check=_stack(workloads.unconstrained_compute_class),
    ),
    PolicySpec(
        "checkpoint-volume-lifecycle-independent",
        "A shared volume used by a cluster with preemptible capacity is lifecycle-independent, "
        "so its checkpoints outlive the cluster.",
        "advisory",
        stack_check=_stack(clusters.volume_lifecycle_independent),
    ),
    PolicySpec(
        "gpu-budget",
        "The stack's clusters stay within its caps on standard GPUs, preemptible GPUs and "
        "estimated USD per hour (prices: together_facts/prices.json, or the config's "
        "pricesPerGpuHour).",
        "advisory",
        stack_check=_budget,
        config={
            clusters.MAX_STANDARD_GPUS: {"type": "integer", "minimum": 0},
            clusters.MAX_PREEMPTIBLE_GPUS: {"type": "integer", "minimum": 0},
            clusters.MAX_USD_PER_HOUR: {"type": "number", "minimum": 0},
            clusters.PRICES_PER_GPU_HOUR: {
                "type": "object",
                "additionalProperties": {"type": "number", "minimum": 0},
            },
        },
    ),
    PolicySpec(
        "reservation-end-ahead",
        "A reserved cluster's reservation_end_time lies at least minDaysLeft days (default 7) "
        "ahead: Together decommissions the cluster at its end, so extend it in place first.",
        "advisory",
        stack_check=_reservation_end,
        config={clusters.MIN_DAYS_LEFT: {"type": "number", "minimum": 0}},
    ),
)

BY_NAME: Final = {p.name: p for p in POLICIES}
