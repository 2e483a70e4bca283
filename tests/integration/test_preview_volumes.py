"""Shared volumes in the PR comment, rendered from REAL `pulumi preview --json` output.

One stack (a 2 TiB volume and the cluster that attaches it) is created once per module; each
scenario only changes the config and previews.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.previews import Previews, record_previews, rejected, rendered, table_row
from tests.specs import CKPT, TRAIN
from together_provider.preview import Outcome, load_price_table
from together_provider.preview_parts.steps import Action

pytestmark = pytest.mark.engine

STORAGE = load_price_table().storage_per_tib_month
VOLUME = CKPT
CLUSTERS: dict[str, Any] = {"train": TRAIN}
SCENARIOS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "grown": ({"ckpt": {**VOLUME, "size_tib": 4}}, CLUSTERS),
    "shrunk": ({"ckpt": {**VOLUME, "size_tib": 1}}, CLUSTERS),
    "cluster_deleted": ({"ckpt": VOLUME}, {}),
}


@pytest.fixture(scope="module")
def previews(engine: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Previews]:
    yield from record_previews(
        tmp_path_factory.mktemp("preview-volumes"),
        engine,
        "volumes",
        {"volumes": {"ckpt": VOLUME}, "clusters": CLUSTERS},
        {
            name: {"volumes": volumes, "clusters": clusters}
            for name, (volumes, clusters) in SCENARIOS.items()
        },
        api_key="sk-preview-v",
        flags=("--show-sames",),
    )


def test_a_grown_volume_shows_its_size_change_and_storage_cost(previews: Any) -> None:
    assert STORAGE is not None
    plan, comment = rendered(previews, "grown")
    assert plan.outcome is Outcome.CHANGES
    # Its cluster stays as it is: the volume id it attaches is known through the volume's update.
    assert [c.action for c in plan.changes["clusters"]] == [Action.SAME]
    assert table_row(comment, "ckpt") == [
        "`ckpt`",
        "in-place update",
        "2 → 4",
        f"${2 * STORAGE:,.2f}† → ${4 * STORAGE:,.2f}†",  # the bundled rate is a placeholder
        f"+${2 * STORAGE:,.2f}†",
    ]
    assert f"Shared-volume storage: ${STORAGE:,.2f}† per TiB-month" in comment
    assert "keeps billing after a cluster is deleted" in comment


def test_a_shrink_is_blocked_with_the_volumes_reason(previews: Any) -> None:
    _, comment = rejected(previews, "shrunk", "ckpt")
    assert "size_tib 2 -> 1 would shrink the volume" in comment


def test_a_volume_that_outlives_its_deleted_cluster_is_called_out(previews: Any) -> None:
    assert STORAGE is not None
    plan, comment = rendered(previews, "cluster_deleted")
    assert plan.outcome is Outcome.REPLACEMENT
    assert table_row(comment, "ckpt")[1:3] == ["unchanged", "2"]
    assert (
        f"Shared volume `ckpt` outlives cluster `train`: storage keeps billing "
        f"(≈ ${2 * STORAGE:,.2f}†/month) after the cluster is deleted" in comment
    )
