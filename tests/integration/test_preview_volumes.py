"""Shared volumes in the PR comment, rendered from REAL `pulumi preview --json` output.

One stack (a 2 TiB volume and the cluster that attaches it) is created once per module; each
scenario only changes the config and previews.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pulumi import automation as auto

from testkit.pulumi_env import PulumiEnv, provider_config
from testkit.sim import SimulatorProcess
from tests.integration.conftest import PROGRAMS
from tests.specs import CLUSTER_SPEC
from together_provider.preview import Outcome, build_plan, load_price_table, render
from together_provider.preview.plan import Action

pytestmark = pytest.mark.engine

STORAGE = load_price_table().storage_per_tib_month
VOLUME: dict[str, Any] = {"region": "us-central-8", "size_tib": 2, "project_id": "proj-test"}
CLUSTERS: dict[str, Any] = {"train": {**CLUSTER_SPEC, "volume": "ckpt"}}
SCENARIOS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "grown": ({"ckpt": {**VOLUME, "size_tib": 4}}, CLUSTERS),
    "shrunk": ({"ckpt": {**VOLUME, "size_tib": 1}}, CLUSTERS),
    "cluster_deleted": ({"ckpt": VOLUME}, {}),
}


@pytest.fixture(scope="module")
def previews(
    engine: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, subprocess.CompletedProcess[str]]]:
    root = tmp_path_factory.mktemp("preview-volumes")
    env = PulumiEnv(root=root, bin_dir=engine)
    with SimulatorProcess(root / "simulator", time_scale=600, api_key="sk-preview-v") as sim:
        work = env.project(PROGRAMS / "volumes")
        stack = env.stack(
            work,
            config={
                "volumes": json.dumps({"ckpt": VOLUME}),
                "clusters": json.dumps(CLUSTERS),
                **provider_config(sim),
            },
        )
        stack.up()
        results = {}
        for name, (volumes, clusters) in SCENARIOS.items():
            stack.set_config("volumes", auto.ConfigValue(json.dumps(volumes)))
            stack.set_config("clusters", auto.ConfigValue(json.dumps(clusters)))
            results[name] = env.run(
                work, "preview", "--json", "--show-sames", "--stack", "test", check=False
            )
        yield results


def _render(previews: dict[str, subprocess.CompletedProcess[str]], name: str) -> tuple[Any, str]:
    plan = build_plan(json.loads(previews[name].stdout), f"{name}.json", load_price_table())
    return plan, render([plan])


def _volume_row(comment: str) -> list[str]:
    line = next(row for row in comment.splitlines() if row.startswith("| `ckpt`"))
    return [cell.strip() for cell in line.strip("|").split("|")]


def test_a_grown_volume_shows_its_size_change_and_storage_cost(previews: Any) -> None:
    assert STORAGE is not None
    plan, comment = _render(previews, "grown")
    assert plan.outcome is Outcome.CHANGES
    # Its cluster stays as it is: the volume id it attaches is known through the volume's update.
    assert [c.action for c in plan.clusters] == [Action.SAME]
    assert _volume_row(comment) == [
        "`ckpt`",
        "in-place update",
        "2 → 4",
        f"${2 * STORAGE:,.2f} → ${4 * STORAGE:,.2f}",
        f"+${2 * STORAGE:,.2f}",
    ]
    assert f"Shared-volume storage: ${STORAGE:,.2f} per TiB-month" in comment
    assert "keeps billing after a cluster is deleted" in comment


def test_a_shrink_is_blocked_with_the_volumes_reason(previews: Any) -> None:
    assert previews["shrunk"].returncode != 0
    plan, comment = _render(previews, "shrunk")
    assert plan.outcome is Outcome.BLOCKED
    (rejection,) = plan.rejections
    assert rejection.cluster == "ckpt"
    assert "size_tib 2 -> 1 would shrink the volume" in comment


def test_a_volume_that_outlives_its_deleted_cluster_is_called_out(previews: Any) -> None:
    assert STORAGE is not None
    plan, comment = _render(previews, "cluster_deleted")
    assert plan.outcome is Outcome.REPLACEMENT
    assert _volume_row(comment)[1:3] == ["unchanged", "2"]
    assert (
        f"Shared volume `ckpt` outlives cluster `train`: storage keeps billing "
        f"(≈ ${2 * STORAGE:,.2f}/month) after the cluster is deleted" in comment
    )
