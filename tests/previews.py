"""Real `pulumi preview --json` runs of config scenarios, and the PR comment read from them: what
the preview tests share."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from pulumi import automation as auto

from testkit.pulumi_env import PulumiEnv, provider_config
from testkit.sim import SimulatorProcess
from tests.integration.conftest import PROGRAMS
from together_provider.preview import Outcome, StackPlan, build_plan, load_price_table, render

Previews = dict[str, subprocess.CompletedProcess[str]]
"""Each scenario's `pulumi preview --json` run, by scenario name."""

Config = Mapping[str, Any]
"""Stack config keys (`clusters`, `volumes`) and their values, each set as JSON."""


def record_previews(
    root: Path,
    engine: Path,
    program: str,
    config: Config,
    scenarios: Mapping[str, Config],
    *,
    api_key: str,
    settle_seconds: float = 0,
    flags: tuple[str, ...] = (),
) -> Iterator[Previews]:
    """Up one stack of `program` with `config` against a fresh simulator (then, with
    `settle_seconds`, let that much simulated time pass and refresh), and preview each
    scenario's config on it; yields the runs while the simulator still runs. Each run's JSON is
    also kept as `root/<scenario>.json`."""
    env = PulumiEnv(root=root, bin_dir=engine)
    with SimulatorProcess(root / "simulator", time_scale=600, api_key=api_key) as sim:
        work = env.project(PROGRAMS / program)
        stack = env.stack(
            work,
            config={**{key: json.dumps(value) for key, value in config.items()},
                    **provider_config(sim)},
        )  # fmt: skip
        stack.up()
        if settle_seconds:
            sim.advance(settle_seconds)
            stack.refresh()
        results = {}
        for name, scenario in scenarios.items():
            for key, value in scenario.items():
                stack.set_config(key, auto.ConfigValue(json.dumps(value)))
            results[name] = env.run(
                work, "preview", "--json", *flags, "--stack", "test", check=False
            )
            (root / f"{name}.json").write_text(results[name].stdout)
        yield results


def rendered(previews: Previews, name: str) -> tuple[StackPlan, str]:
    """Scenario `name`'s plan and the comment rendered from it, with the committed prices."""
    plan = build_plan(json.loads(previews[name].stdout), f"{name}.json", load_price_table())
    return plan, render([plan])


def rejected(previews: Previews, name: str, resource: str) -> tuple[str, str]:
    """Scenario `name` blocked by the one rejection of `resource`: its message and the comment
    (the preview failed, and the plan is blocked by exactly that rejection)."""
    assert previews[name].returncode != 0
    plan, comment = rendered(previews, name)
    assert plan.outcome is Outcome.BLOCKED
    (rejection,) = plan.rejections
    assert rejection.cluster == resource
    return rejection.message, comment


def table_row(comment: str, resource: str) -> list[str]:
    """The cells of `resource`'s row in the comment's table (its first cell is `resource`)."""
    line = next(row for row in comment.splitlines() if row.startswith(f"| `{resource}`"))
    return [cell.strip() for cell in line.strip("|").split("|")]
