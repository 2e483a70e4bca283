"""The PR-comment renderer on small hand-written `pulumi preview --json` documents."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from together_provider.cluster import rules
from together_provider.cluster.table import CLUSTER_TYPE
from together_provider.framework.schema import UNKNOWN
from together_provider.preview import (
    BAD_INPUT_EXIT,
    Outcome,
    PreviewInputError,
    build_plan,
    load_price_table,
    render,
)
from together_provider.preview.__main__ import main
from together_provider.preview_parts.prices import DEFAULT_PRICES_FILE

PROJECT = "together-gpu-clusters"
STACK_URN = f"urn:pulumi:dev::{PROJECT}::pulumi:pulumi:Stack::{PROJECT}-dev"
SPEC: dict[str, Any] = {"gpu_type": "H100_SXM", "num_gpus": 8, "num_preemptible_gpus": 16}


def _urn(name: str) -> str:
    return f"urn:pulumi:dev::{PROJECT}::pulumi:pulumi:Stack${CLUSTER_TYPE}::{name}"


def _state(name: str, allocated: int | None = None, **spec: Any) -> dict[str, Any]:
    inputs = {"__provider": "[secret]", "cluster_name": name, "region": "us-central-8", **spec}
    outputs = {**inputs, "allocated_preemptible_gpus": allocated} if allocated is not None else {}
    return {"type": CLUSTER_TYPE, "inputs": inputs, "outputs": outputs}


def _step(
    op: str, name: str, old: dict[str, Any] | None, new: dict[str, Any] | None, **extra: Any
) -> dict[str, Any]:
    return {"op": op, "urn": _urn(name), "oldState": old, "newState": new, **extra}


def _doc(
    *steps: dict[str, Any], config: dict[str, Any] | None = None, **extra: Any
) -> dict[str, Any]:
    root = {"op": "same", "urn": STACK_URN}
    return {
        "config": {f"{PROJECT}:clusters": "{}", **(config or {})},
        "steps": [root, *steps],
        "changeSummary": {},
        **extra,
    }


def _plan(document: dict[str, Any]) -> Any:
    return build_plan(document, "dev.json", load_price_table())


def _raise_target() -> dict[str, Any]:
    return _doc(
        _step(
            "update",
            "train",
            _state("train", 8, **SPEC),
            _state("train", **{**SPEC, "num_preemptible_gpus": 32}),
        )
    )


def test_preemptible_gpus_cost_half_the_on_demand_rate() -> None:
    (cluster,) = _plan(_raise_target()).changes["clusters"]
    rate = load_price_table().rates["H100_SXM"]
    assert cluster.old_cost == pytest.approx(8 * rate + 16 * rate / 2)
    assert cluster.new_cost == pytest.approx(8 * rate + 32 * rate / 2)


def test_target_raise_renders_counts_allocated_and_delta() -> None:
    comment = render([_plan(_raise_target())])
    rate = load_price_table().rates["H100_SXM"]
    row = next(line for line in comment.splitlines() if line.startswith("| `train`"))
    assert row.split(" | ")[1:] == [
        "in-place update",
        "H100_SXM",
        "8",
        "16 → 32",
        "8",
        f"${16 * rate:,.2f}† → ${24 * rate:,.2f}†",
        f"+${8 * rate:,.2f}† |",
    ]
    assert "`train`.`num_preemptible_gpus`: `16` → `32`" in comment
    assert _plan(_raise_target()).outcome is Outcome.CHANGES


def test_stack_config_overrides_one_rate() -> None:
    doc = _raise_target()
    doc["config"][f"{PROJECT}:pricesPerGpuHour"] = json.dumps({"H100_SXM": 1.0})
    (cluster,) = _plan(doc).changes["clusters"]
    assert (cluster.old_cost, cluster.new_cost) == (16.0, 24.0)
    comment = render([_plan(doc)])
    assert (
        f"the stack's own rates from `{PROJECT}:pricesPerGpuHour`: H100_SXM $1.00 per GPU-hour"
        in comment
    )
    # The stack's own rate is no placeholder: no mark, no placeholder wording.
    assert "†" not in comment
    assert "placeholder" not in comment.lower()


def _cells(comment: str, name: str) -> list[str]:
    row = next(line for line in comment.splitlines() if line.startswith(f"| `{name}`"))
    return [cell.strip() for cell in row.strip("|").split("|")]


def test_every_figure_from_a_placeholder_rate_is_marked_where_it_is_shown(tmp_path: Path) -> None:
    source = tmp_path / "dev.json"
    source.write_text(json.dumps(_raise_target()))
    out = tmp_path / "c.md"
    assert main(["--stack", f"dev={source}", "--output", str(out),
                 "--max-monthly-increase", "100"]) == Outcome.CHANGES  # fmt: skip
    comment = out.read_text()
    rate = load_price_table().rates["H100_SXM"]
    # The table's cost and delta cells,
    assert _cells(comment, "train")[-2:] == [
        f"${16 * rate:,.2f}† → ${24 * rate:,.2f}†",
        f"+${8 * rate:,.2f}†",
    ]
    # the totals (per hour and the bold monthly figure),
    total = next(line for line in comment.splitlines() if line.startswith("**Listed clusters:**"))
    assert f"Δ +${8 * rate:,.2f}†/h, ≈ +${8 * rate * 730:,.2f}†/month" in total
    assert "placeholder rates, not a price list" in total
    # the guardrail block, and the legend under the table: the file and the key that replace
    # the rates.
    assert "over the `--max-monthly-increase` threshold of $100.00/month by " in comment
    assert f"by ${8 * rate * 730 - 100:,.2f}†" in comment
    legend = (
        "† computed from a placeholder rate of `together_facts/prices.json` (not a price list; "
        f"as of {load_price_table().as_of}): put real rates there (or pass `--prices FILE`), "
        f"or per stack under `{PROJECT}:pricesPerGpuHour`."
    )
    assert legend in comment
    footer = comment.split("<sub>")[1]
    assert "PLACEHOLDER rates for H100_SXM from `together_facts/prices.json`" in footer
    assert f"`{PROJECT}:pricesPerGpuHour`" in footer


def test_create_costs_from_zero_and_delete_to_zero() -> None:
    doc = _doc(
        _step("create", "new", None, _state("new", num_gpus=16, gpu_type="H200_SXM")),
        _step("delete", "old", _state("old", 0, **SPEC), None),
    )
    new, old = _plan(doc).changes["clusters"]
    rate = load_price_table().rates
    assert (new.old_cost, new.new_cost) == (0.0, pytest.approx(16 * rate["H200_SXM"]))
    assert (old.old_cost, old.new_cost) == (pytest.approx(16 * rate["H100_SXM"]), 0.0)
    assert _plan(doc).outcome is Outcome.REPLACEMENT


@pytest.mark.parametrize("cluster_steps", [0, 1], ids=["clusters-unchanged", "cluster-updated"])
def test_a_delete_of_another_resource_needs_approval(tmp_path: Path, cluster_steps: int) -> None:
    """A Deployment the PR deletes is destructive too: exit 11 (approval), not 10, even when the
    clusters themselves are unchanged or only updated in place."""
    web = f"urn:pulumi:dev::{PROJECT}::pulumi:pulumi:Stack$kubernetes:apps/v1:Deployment::web"
    update = _raise_target()["steps"][1:][:cluster_steps]
    summary = {"same": 1 + (1 - cluster_steps), "update": cluster_steps, "delete": 1}
    doc = _doc(*update, {"op": "delete", "urn": web}, changeSummary=summary)
    plan = _plan(doc)
    assert plan.outcome is Outcome.REPLACEMENT
    assert "Engine change summary (all resources): delete 1" in render([plan])
    source = tmp_path / "dev.json"
    source.write_text(json.dumps(doc))
    assert main(["--stack", f"dev={source}", "--output", str(tmp_path / "c.md")]) == 11


def test_replacement_warns_with_reasons_and_what_goes_away() -> None:
    old, new = _state("train", 16, **SPEC), _state("train", **SPEC)
    new["inputs"]["region"] = "us-west-2"
    doc = _doc(_step("replace", "train", old, new, replaceReasons=["region"]))
    comment = render([_plan(doc)], approval_label="ok-to-replace")
    warning = comment.split("> [!WARNING]", 1)[1].split("\n\n", 1)[0]
    assert "`ok-to-replace` label" in warning
    assert "`train` is **replaced** (because of `region`)" in warning
    assert "8 standard GPUs and 16 allocated preemptible GPUs" in warning
    assert "deleted first" in warning
    assert "`us-central-8` → `us-west-2` (forces replacement)" in comment


@pytest.mark.parametrize(
    ("new_name", "deletes_first"),
    [("train", True), ("train-v2", False), (UNKNOWN, True)],
    ids=["same name", "renamed", "name not known yet"],
)
def test_the_replacement_order_is_the_rules_answer(new_name: str, deletes_first: bool) -> None:
    old, new = _state("train", 0, **SPEC), _state("train", **SPEC)
    new["inputs"] |= {"cluster_name": new_name, "region": "us-west-2"}
    doc = _doc(_step("replace", "train", old, new, replaceReasons=["cluster_name", "region"]))
    (cluster,) = _plan(doc).changes["clusters"]
    assert cluster.delete_first is deletes_first
    assert rules.RULEBOOK.plan(old["inputs"], new["inputs"]).delete_before_replace is deletes_first


def test_replacement_steps_merge_into_one_cluster() -> None:
    old, new = _state("train", 0, **SPEC), _state("train", **SPEC)
    doc = _doc(
        _step("delete-replaced", "train", old, None),
        _step("replace", "train", old, new, replaceReasons=["gpu_type"]),
        _step("create-replacement", "train", old, new, replaceReasons=["gpu_type"]),
    )
    (cluster,) = _plan(doc).changes["clusters"]
    assert (cluster.action, cluster.replace_reasons) == ("replace", ("gpu_type",))


def test_rejected_spec_blocks_with_the_providers_message() -> None:
    doc = _doc(
        diagnostics=[
            {
                "urn": _urn("train"),
                "message": f"error: {CLUSTER_TYPE} resource 'train': property num_gpus value {{0}} "
                "has a problem: cluster 'train': num_gpus=0 leaves no standard node\n",
                "severity": "error",
            },
            {
                "message": "error: Resource monitor has terminated, shutting down\n",
                "severity": "error",
            },
        ]
    )
    plan = _plan(doc)
    assert plan.outcome is Outcome.BLOCKED
    comment = render([plan])
    assert "> - `train`: cluster 'train': num_gpus=0 leaves no standard node\n" in comment
    assert "Resource monitor" not in comment


def test_no_changes() -> None:
    plan = _plan(_doc())
    assert plan.outcome is Outcome.NO_CHANGES
    assert "No Together cluster changes." in render([plan])


def test_unknown_sizes_are_not_priced() -> None:
    new = _state("train", **{**SPEC, "num_gpus": "04da6b54-80e4-46f7-96ec-b56ff0331ba9"})
    (cluster,) = _plan(_doc(_step("create", "train", None, new))).changes["clusters"]
    assert cluster.new_cost is None
    assert "| ? |" in render([_plan(_doc(_step("create", "train", None, new)))])


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "empty"),
        ('{"config": {}, "steps": [', "malformed or truncated JSON"),
        ("[1, 2]", "not a `pulumi preview --json` document"),
        ('{"steps": [{"op": "same"}]}', "a step without a string 'op' and 'urn'"),
        (
            json.dumps(
                {
                    "steps": [{"op": "create", "urn": "urn:pulumi:dev::web::aws:s3:Bucket::b"}],
                    "changeSummary": {"create": 1},
                }
            ),
            "no Together cluster in this preview",
        ),
    ],
)
def test_bad_input_names_the_file_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, problem: str
) -> None:
    source, out = tmp_path / "dev.json", tmp_path / "comment.md"
    source.write_text(text)
    assert main([str(source), "--output", str(out)]) == BAD_INPUT_EXIT
    error = capsys.readouterr().err
    assert str(source) in error
    assert problem in error
    assert list(tmp_path.iterdir()) == [source]


def test_unpriced_gpu_type_is_an_error_naming_the_preview(tmp_path: Path) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"on_demand_usd_per_gpu_hour": {"H200_SXM": 3.0}}))
    with pytest.raises(PreviewInputError, match=r"dev\.json: GPU type 'H100_SXM' has no price"):
        build_plan(_raise_target(), "dev.json", load_price_table(prices))


def test_unknown_gpu_type_in_the_price_table_names_the_table(tmp_path: Path) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"on_demand_usd_per_gpu_hour": {"H100": 3.0}}))
    with pytest.raises(PreviewInputError, match=r"prices\.json: unknown GPU type 'H100'"):
        load_price_table(prices)


def test_a_later_bad_file_keeps_the_old_output(tmp_path: Path) -> None:
    good, bad, out = tmp_path / "dev.json", tmp_path / "prod.json", tmp_path / "comment.md"
    good.write_text(json.dumps(_raise_target()))
    bad.write_text('{"steps": [')
    out.write_text("previous comment")
    assert main(["--stack", f"dev={good}", "--stack", f"prod={bad}", "--output", str(out)]) == 2
    assert out.read_text() == "previous comment"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["comment.md", "dev.json", "prod.json"]


def test_output_file_and_exit_code_follow_the_worst_stack(tmp_path: Path) -> None:
    dev, prod, out = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "comment.md"
    dev.write_text(json.dumps(_raise_target()))
    prod.write_text(json.dumps(_doc()))
    assert main(["--stack", f"dev={dev}", "--stack", f"prod={prod}", "--output", str(out)]) == 10
    comment = out.read_text()
    assert "<!-- together-gpu-clusters-preview stack=dev -->" in comment
    assert "<!-- together-gpu-clusters-preview stack=prod -->" in comment


def _blocked() -> dict[str, Any]:
    return _doc(
        diagnostics=[
            {
                "urn": _urn("train"),
                "message": f"error: {CLUSTER_TYPE} resource 'train': property num_gpus value {{0}} "
                "has a problem: cluster 'train': num_gpus=0 leaves no standard node\n",
                "severity": "error",
            }
        ]
    )


@pytest.mark.parametrize("order", ["dev-first", "prod-first"])
def test_the_worst_stack_sets_the_exit_code_whatever_the_order(tmp_path: Path, order: str) -> None:
    dev, prod = tmp_path / "dev.json", tmp_path / "prod.json"
    dev.write_text(json.dumps(_doc()))  # unchanged
    prod.write_text(json.dumps(_blocked()))
    stacks = [f"dev={dev}", f"prod={prod}"]
    if order == "prod-first":
        stacks.reverse()
    args = [arg for stack in stacks for arg in ("--stack", stack)]
    assert main([*args, "--output", str(tmp_path / "comment.md")]) == 12  # Outcome.BLOCKED


def _real_prices(tmp_path: Path) -> Path:
    """The bundled table's figures, declared real (`placeholder: false`)."""
    document = json.loads(DEFAULT_PRICES_FILE.read_text())
    path = tmp_path / "real-prices.json"
    path.write_text(json.dumps({**document, "placeholder": False, "source": "a price list"}))
    return path


def test_a_cost_guardrail_blocks_without_github_too(tmp_path: Path) -> None:
    source = tmp_path / "dev.json"
    source.write_text(json.dumps(_raise_target()))  # +16 preemptible GPUs: +8 x rate per hour
    rate = load_price_table().rates["H100_SXM"]
    out = tmp_path / "c.md"
    args = [
        "--stack",
        f"dev={source}",
        "--output",
        str(out),
        "--prices",
        str(_real_prices(tmp_path)),
    ]
    args += ["--max-hourly-increase"]
    assert main([*args, f"{8 * rate:.2f}"]) == Outcome.CHANGES  # equal to the limit passes
    assert main([*args, f"{8 * rate - 1:.2f}"]) == Outcome.BLOCKED
    comment = out.read_text()
    assert f"threshold of ${8 * rate - 1:,.2f}/h by $1.00" in comment
    assert "†" not in comment and "placeholder" not in comment.lower()


@pytest.mark.parametrize(
    ("opt_in", "outcome"),
    [(None, Outcome.CHANGES), ("false", Outcome.CHANGES), ("true", Outcome.BLOCKED)],
)
def test_a_guardrail_on_placeholder_rates_warns_unless_the_stack_opts_in(
    tmp_path: Path, opt_in: str | None, outcome: Outcome
) -> None:
    doc = _raise_target()
    if opt_in is not None:
        doc["config"][f"{PROJECT}:failOnPlaceholderPrices"] = opt_in
    source = tmp_path / "dev.json"
    source.write_text(json.dumps(doc))
    rate = load_price_table().rates["H100_SXM"]
    out = tmp_path / "c.md"
    args = ["--stack", f"dev={source}", "--output", str(out), "--max-hourly-increase", "1"]
    assert main(args) == outcome
    comment = out.read_text()
    crossing = f"> - the cost rises by ${8 * rate:,.2f}†/h, over the `--max-hourly-increase`"
    assert crossing in comment
    if outcome is Outcome.BLOCKED:
        assert "> **Blocked by 1 cost guardrail(s):**" in comment
        assert "not blocking" not in comment
    else:
        assert (
            "> [!WARNING]\n> **1 cost guardrail(s) crossed on placeholder rates: not blocking.**"
            in comment
        )
        assert f"`{PROJECT}:failOnPlaceholderPrices` to `true`" in comment
        assert "Blocked" not in comment


def test_the_opt_in_key_must_be_a_boolean(tmp_path: Path) -> None:
    doc = _raise_target()
    doc["config"][f"{PROJECT}:failOnPlaceholderPrices"] = "yes"
    with pytest.raises(PreviewInputError, match="failOnPlaceholderPrices must be true or false"):
        _plan(doc)


def _stored(modified: str) -> dict[str, Any]:
    """A preview without `--refresh` of a cluster whose state was last written at `modified`."""
    doc = _raise_target()
    doc["steps"][1]["oldState"]["modified"] = modified
    return doc


def test_live_figures_from_the_stored_state_carry_its_time() -> None:
    comment = render([_plan(_stored("2026-12-02T11:40:12.123456789Z"))])
    assert "| Allocated as of 2026-12-02 11:40 UTC |" in comment
    assert "> **Not refreshed:**" in comment
    assert "(last written 2026-12-02 11:40 UTC)" in comment
    assert "`pulumi preview --refresh`" in comment
    assert "Allocated now" not in comment


def test_a_refreshed_preview_shows_figures_as_live() -> None:
    doc = _stored("2026-12-02T11:40:12Z")
    old = doc["steps"][1]["oldState"]
    doc["steps"].insert(1, _step("refresh", "train", old, old))
    plan = _plan(doc)
    assert plan.refreshed
    comment = render([plan])
    assert "| Allocated now (refreshed) |" in comment
    assert "Not refreshed" not in comment


def test_a_deletion_says_its_allocated_count_is_as_of_the_last_refresh() -> None:
    doc = _doc(_step("delete", "train", _state("train", 8, **SPEC), None))
    comment = render([_plan(doc)])
    assert "8 standard GPUs and 8 allocated preemptible GPUs (as of the last refresh)" in comment
