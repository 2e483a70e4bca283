"""PR comments rendered from REAL `pulumi preview --json` output (engine + simulator).

One stack is created once per module (8 standard GPUs, a preemptible target of 8, fully
allocated); every scenario only changes the config and previews, so the engine calls stay few.
The poster (`--github-pr`) posts the same previews to the GitHub contract server; its other
behaviours are in tests/unit/test_gitops_poster.py.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from testkit.github_server import GitHubServer
from tests.previews import Previews, record_previews, rejected, rendered, table_row
from tests.specs import CLUSTER_SPEC
from together_provider.preview import Outcome, load_price_table
from together_provider.preview.__main__ import main
from together_provider.preview_parts.prices import DEFAULT_PRICES_FILE

pytestmark = pytest.mark.engine

BASE: dict[str, Any] = {**CLUSTER_SPEC, "num_preemptible_gpus": 8}
RATE = load_price_table().rates["H100_SXM"]
SCENARIOS: dict[str, dict[str, Any]] = {
    "target_raised": {"train": {**BASE, "num_preemptible_gpus": 24}},
    "standard_scaled": {"train": {**BASE, "num_gpus": 16}},
    "region_changed": {"train": {**BASE, "region": "us-west-2"}},
    "conversion": {"train": {**BASE, "num_gpus": 16, "num_preemptible_gpus": 0}},
    "zero_standard": {"train": {**BASE, "num_gpus": 0, "num_preemptible_gpus": 16}},
    "no_change": {"train": BASE},
    "deleted": {},
}


@pytest.fixture(scope="module")
def previews(engine: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Previews]:
    """`pulumi preview --json` of every scenario, against one stack created once."""
    yield from record_previews(
        tmp_path_factory.mktemp("preview-comment"),
        engine,
        "cluster",
        {"clusters": {"train": BASE}},
        {name: {"clusters": clusters} for name, clusters in SCENARIOS.items()},
        api_key="sk-preview",
        settle_seconds=600,  # let the preemptible target fill, then record it in the state
    )


def _cost(gpus: float) -> str:
    """A cost at the bundled rate: a placeholder, so marked."""
    return f"${gpus * RATE:,.2f}†"


def test_target_raised_is_an_in_place_update_with_its_cost(previews: Any) -> None:
    plan, comment = rendered(previews, "target_raised")
    assert previews["target_raised"].returncode == 0
    assert plan.outcome is Outcome.CHANGES
    assert table_row(comment, "train") == [
        "`train`", "in-place update", "H100_SXM", "8", "8 → 24", "8",
        f"{_cost(8 + 4)} → {_cost(8 + 12)}", f"+{_cost(8)}",
    ]  # fmt: skip
    assert "`train`.`num_preemptible_gpus`: `8` → `24`" in comment
    assert "[!WARNING]" not in comment
    # Not refreshed: the allocated column carries the time the engine last wrote the state.
    assert plan.state_time is not None and not plan.refreshed
    assert f"| Allocated as of {plan.state_time} |" in comment
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", plan.state_time)
    assert "> **Not refreshed:**" in comment


def test_standard_scaled_is_an_in_place_update(previews: Any) -> None:
    plan, comment = rendered(previews, "standard_scaled")
    assert plan.outcome is Outcome.CHANGES
    assert table_row(comment, "train")[1:] == [
        "in-place update", "H100_SXM", "8 → 16", "8", "8",
        f"{_cost(12)} → {_cost(20)}", f"+{_cost(8)}",
    ]  # fmt: skip


def test_region_change_is_a_replacement_that_needs_approval(previews: Any) -> None:
    plan, comment = rendered(previews, "region_changed")
    assert plan.outcome is Outcome.REPLACEMENT
    assert table_row(comment, "train")[1:] == [
        "**replace**", "H100_SXM", "8", "8", "8", _cost(12), "±$0.00†",
    ]  # fmt: skip
    assert "> - `train` is **replaced** (because of `region`)" in comment
    assert "8 standard GPUs and 8 allocated preemptible GPUs (as of the last refresh)" in comment
    assert "`train`.`region`: `us-central-8` → `us-west-2` (forces replacement)" in comment


def test_conversion_is_blocked_with_the_providers_reason(previews: Any) -> None:
    message, comment = rejected(previews, "conversion", "train")
    assert message.startswith("cluster 'train': num_gpus 8 -> 16 with")
    assert "refuses it as a safety policy: capacity drops while the new nodes provision" in comment
    assert "| `train`" not in comment


def test_zero_standard_is_blocked(previews: Any) -> None:
    assert previews["zero_standard"].returncode != 0
    plan, comment = rendered(previews, "zero_standard")
    assert plan.outcome is Outcome.BLOCKED
    assert "> - `train`: cluster 'train': num_gpus=0 leaves no standard node" in comment
    assert plan.errors == ()


def test_no_change(previews: Any) -> None:
    plan, comment = rendered(previews, "no_change")
    assert plan.outcome is Outcome.NO_CHANGES
    assert plan.changes["clusters"] == ()
    assert "No Together cluster changes." in comment


def test_deleted_cluster_warns_and_drops_its_cost(previews: Any) -> None:
    plan, comment = rendered(previews, "deleted")
    assert plan.outcome is Outcome.REPLACEMENT
    assert table_row(comment, "train")[1:] == [
        "**delete**", "H100_SXM", "8 → —", "8 → —", "8", f"{_cost(12)} → —", f"-{_cost(12)}",
    ]  # fmt: skip
    assert "> - `train` is **deleted**" in comment


@pytest.mark.parametrize(
    ("scenario", "code"),
    [("no_change", 0), ("target_raised", 10), ("region_changed", 11), ("deleted", 11),
     ("conversion", 12)],
)  # fmt: skip
def test_cli_exit_code(previews: Any, tmp_path: Path, scenario: str, code: int) -> None:
    source = tmp_path / f"{scenario}.json"
    source.write_text(previews[scenario].stdout)
    assert main(["--stack", f"dev={source}", "--output", str(tmp_path / "c.md")]) == code
    assert "stack=dev -->" in (tmp_path / "c.md").read_text()


def test_the_poster_posts_the_real_figures_edits_them_and_applies_a_guardrail(
    previews: Any, tmp_path: Path
) -> None:
    token = "ghs-engine-test-token"
    with GitHubServer(token=token, repos=["acme/gpu"]) as github:
        github.seed_pull_request("acme/gpu", 7)
        env = {"GITHUB_API_URL": github.url, "GITHUB_REPOSITORY": "acme/gpu", "GITHUB_TOKEN": token}

        def post(scenario: str, *extra: str) -> tuple[int, str]:
            source = tmp_path / f"{scenario}.json"
            source.write_text(previews[scenario].stdout)
            code = main(["--stack", f"dev={source}", "--github-pr", "7", *extra], environ=env)
            (comment,) = github.comments("acme/gpu", 7)
            return code, comment["body"]

        assert post("target_raised")[0] == 10
        (first,) = github.comments("acme/gpu", 7)
        code, body = post("standard_scaled")
        assert code == 10
        assert github.comments("acme/gpu", 7)[0]["id"] == first["id"]  # edited in place
        assert table_row(body, "train")[1:] == [
            "in-place update", "H100_SXM", "8 → 16", "8", "8",
            f"{_cost(12)} → {_cost(20)}", f"+{_cost(8)}",
        ]  # fmt: skip
        monthly = 8 * RATE * 730  # +16 preemptible GPUs at half the rate, 730 hours
        # On the bundled placeholder rates the guardrail warns; on real ones it blocks.
        code, body = post("target_raised", "--max-monthly-increase", "100")
        assert code == Outcome.CHANGES
        assert "crossed on placeholder rates: not blocking" in body
        assert (
            f"the cost rises by ${monthly:,.2f}†/month, over the `--max-monthly-increase` "
            f"threshold of $100.00/month by ${monthly - 100:,.2f}†"
        ) in body
        real = tmp_path / "real-prices.json"
        real.write_text(json.dumps({**json.loads(DEFAULT_PRICES_FILE.read_text()),
                                    "placeholder": False, "source": "a price list"}))  # fmt: skip
        code, body = post("target_raised", "--max-monthly-increase", "100", "--prices", str(real))
        assert code == Outcome.BLOCKED
        assert (
            f"the cost rises by ${monthly:,.2f}/month, over the `--max-monthly-increase` "
            f"threshold of $100.00/month by ${monthly - 100:,.2f}"
        ) in body
