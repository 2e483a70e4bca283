"""The one table of what `make mutate` mutates: each pure core, the unit test files that cover it,
and the test files that reach it only through a child process. A module that moves (as the worker
did, into its own distribution under `worker/`) is one edited row here."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

__all__ = ["FLOOR", "MODULES", "Module", "by_key"]

FLOOR: Final = 0.90
"""The share of non-equivalent mutants each module's tests must kill (issue 43)."""


@dataclass(frozen=True)
class Module:
    """One mutated module: `key` is what `make mutate MODULE=...` takes."""

    key: str
    path: str
    """The file mutated, relative to the repository root."""
    tests: tuple[str, ...]
    """The unit test files run against its mutants (mutmut runs, per mutant, only the tests of
    these files that called the mutated function)."""
    through_processes: tuple[str, ...] = ()
    """The tests (node-id prefixes: a file, or `file::test_name_start`) among `tests` that run the
    module in a child process (`python -m ...`). mutmut sees which tests call a function only in
    its own process, so the functions no test calls in process are given these tests: the child
    process imports the mutated copy and inherits the mutant's name, so they do judge it."""
    root: str = "."
    """The directory its package is imported from (`worker` for the worker's own distribution,
    whose `worker/together_worker/` is imported as `together_worker`)."""

    @property
    def inner(self) -> str:
        """`path` relative to `root`: what the import system sees."""
        if self.root == ".":
            return self.path
        prefix = f"{self.root.rstrip('/')}/"
        if not self.path.startswith(prefix):
            raise ValueError(f"{self.key}: path {self.path!r} is not under its root {self.root!r}")
        return self.path.removeprefix(prefix)

    @property
    def dotted(self) -> str:
        """The module's import name, which prefixes each of its mutants' names."""
        return self.inner.removesuffix(".py").replace("/", ".")


def _unit(*names: str) -> tuple[str, ...]:
    return tuple(f"tests/unit/{name}.py" for name in names)


_PREVIEW_TESTS: Final = _unit(
    "test_preview_render", "test_preview_policy", "test_preview_ranges", "test_preview_volumes"
)

_RULES_TESTS: Final = _unit(
    "test_cluster_rules",
    "test_cluster_fields",
    "test_ranges",
    "test_counts",
    "test_spec",
    "test_volume_rules",
)
"""The rules and the rulebook they run on are judged by the same tests."""

_WORKER_PROCESSES: Final = "tests/unit/test_worker_processes.py"

MODULES: Final[tuple[Module, ...]] = (
    Module(
        "rules",
        "together_provider/cluster/rules.py",
        _RULES_TESTS,
    ),
    Module(
        "rulebook",
        "together_provider/framework/rulebook.py",
        _RULES_TESTS,
    ),
    Module(
        "decide",
        "together_autoscaler/decide.py",
        _unit("test_autoscaler_decide", "test_autoscaler_soak"),
    ),
    Module(
        "pods",
        "together_autoscaler/pods.py",
        _unit("test_autoscaler_pods", "test_autoscaler_objects"),
    ),
    Module(
        "leader",
        "together_autoscaler/leader.py",
        _unit("test_autoscaler_leader", "test_autoscaler_lease", "test_autoscaler_controller"),
    ),
    Module(
        "retry", "together_api/retry.py", _unit("test_retry", "test_client", "test_retry_edges")
    ),
    Module("poll", "together_api/poll.py", _unit("test_waits", "test_poll_edges")),
    Module(
        "placement",
        "together_facts/placement.py",
        _unit(
            "test_placement",
            "test_autoscaler_pods",
            "test_kubernetes_helpers",
            "test_policy_checks",
        ),
    ),
    Module(
        "prices",
        "together_facts/prices.py",
        _unit(
            "test_prices",
            "test_preview_render",
            "test_policy_checks",
            "test_counts",
            "test_locale_faults",
        ),
    ),
    Module(
        "preview-prices",
        "together_provider/preview_parts/prices.py",
        _unit("test_prices", "test_preview_render"),
    ),
    Module(
        "plan",
        "together_provider/preview/plan.py",
        (*_unit("test_preview_plan", "test_plan_facts"), *_PREVIEW_TESTS),
    ),
    Module(
        "steps",
        "together_provider/preview_parts/steps.py",
        (*_unit("test_preview_plan", "test_plan_facts"), *_PREVIEW_TESTS),
    ),
    Module(
        "guardrails",
        "together_provider/preview_parts/guardrails.py",
        (*_unit("test_preview_guardrails"), *_PREVIEW_TESTS),
    ),
    Module(
        "cluster-preview",
        "together_provider/cluster/preview.py",
        (
            *_unit(
                "test_cluster_preview_words",
                "test_preview_reservation",
                "test_preview_plan",
                "test_preview_guardrails",
            ),
            *_PREVIEW_TESTS,
        ),
    ),
    Module(
        "volume-preview",
        "together_provider/volume/preview.py",
        (
            *_unit("test_volume_preview_words", "test_preview_plan", "test_volume_rules"),
            *_PREVIEW_TESTS,
        ),
    ),
    Module(
        "volume-rules",
        "together_provider/volume/rules.py",
        _unit("test_volume_rules", "test_volume_shrink", "test_cluster_rules"),
    ),
    Module(
        "preview-drill",
        "together_provider/preview/drill.py",
        _unit("test_preview_drill", "test_locale_faults"),
    ),
    Module("verdict", "together_drill/verdict.py", _unit("test_drill_verdict", "test_drill_edges")),
    Module(
        "evidence",
        "together_drill/evidence.py",
        _unit(
            "test_drill_evidence",
            "test_drill_judge",
            "test_drill_edges",
            "test_fault_injection",
        ),
    ),
    Module("targets", "together_drill/targets.py", _unit("test_drill_targets", "test_drill_edges")),
    Module("starting", "together_drill/starting.py", _unit("test_drill_starting")),
    Module(
        "checkpoints",
        "worker/together_worker/checkpoints.py",
        _unit("test_worker", "test_worker_processes", "test_fault_injection"),
        through_processes=(
            f"{_WORKER_PROCESSES}::test_a_kill_9",
            f"{_WORKER_PROCESSES}::test_sigterm_checkpoints",
        ),
        root="worker",
    ),
    Module(
        "launcher",
        "worker/together_worker/launcher.py",
        _unit("test_worker_processes", "test_fault_injection"),
        through_processes=(f"{_WORKER_PROCESSES}::test_the_launcher_",),
        root="worker",
    ),
)


def by_key(key: str) -> Module:
    """The row named `key` (or by its path or dotted name); a clear error naming the choices."""
    for module in MODULES:
        if key in (module.key, module.path, module.dotted):
            return module
    choices = ", ".join(m.key for m in MODULES)
    raise KeyError(f"MODULE={key!r} is not in mutate/modules.py; choose one of: {choices}")
