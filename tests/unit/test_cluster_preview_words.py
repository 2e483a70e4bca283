"""The clusters' part of the PR comment (`cluster/preview.py`) word for word, on one preview of
six clusters that between them take every path: a ranged floor PUT to its bound, a standard
range under auto_scale, a replacement that deletes first and one that creates first, a deletion,
a creation whose size is known only after apply, and one left alone. The GPU counts and $/h
here are what the guardrails block a PR on."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from together_facts.prices import PriceTable
from together_provider.cluster.preview import ClusterChange
from together_provider.cluster.table import CLUSTER_TYPE
from together_provider.framework.schema import UNKNOWN
from together_provider.preview import build_plan
from together_provider.preview.plan import StackPlan
from together_provider.preview_parts.kinds import preview_of
from together_provider.preview_parts.steps import Action
from together_provider.registry import BY_TYPE

PROJECT = "proj"
DESTRUCTIVE = frozenset({Action.DELETE, Action.REPLACE})
PRICES = PriceTable(
    {"H100_SXM": 2.0, "H200_SXM": 1.0, "B200_SXM": 4.0},
    "test rates",
    "2026-01-01",
    file="rates.json",
)
BASE = {"gpu_type": "H100_SXM", "num_gpus": 8, "num_preemptible_gpus": 16, "region": "r"}


def _state(name: str, inputs: dict[str, Any], **outputs: Any) -> dict[str, Any]:
    inputs = {"__provider": "[secret]", "cluster_name": name, **inputs}
    echo = {**inputs, **outputs} if outputs else {}
    return {
        "type": CLUSTER_TYPE,
        "inputs": inputs,
        "outputs": echo,
        "modified": "2026-03-04T05:06:07Z",
    }


def _step(op: str, name: str, old: Any, new: Any, **extra: Any) -> dict[str, Any]:
    urn = f"urn:pulumi:dev::{PROJECT}::pulumi:pulumi:Stack${CLUSTER_TYPE}::{name}"
    return {"op": op, "urn": urn, "oldState": old, "newState": new, **extra}


def _without_gpu_type(state: dict[str, Any]) -> dict[str, Any]:
    return {**state, "inputs": {k: v for k, v in state["inputs"].items() if k != "gpu_type"}}


RANGED = {**BASE, "num_preemptible_gpus": 24, "max_preemptible_gpus": 32}
AUTO = {**BASE, "auto_scale": True, "auto_scale_max_gpus": 32}
STEPS = [
    # a floor raised above the live target: the update PUTs it (16 -> 24)
    _step(
        "update",
        "grow",
        _state(
            "grow",
            {**RANGED, "num_preemptible_gpus": 16},
            num_gpus=8,
            desired_preemptible_gpus=16,
            allocated_preemptible_gpus=12,
        ),
        _state("grow", {**RANGED, "labels": {"team": "a"}}),
    ),
    # auto_scale: the standard count moves inside 8-32 by itself, stored at 16
    _step(
        "same",
        "auto",
        _state("auto", {**AUTO, "num_gpus": 16}, num_gpus=16, allocated_preemptible_gpus=0),
        _state("auto", AUTO),
    ),
    _step(
        "replace",
        "move",
        _state("move", BASE, num_gpus=8, allocated_preemptible_gpus=16),
        _state("move", {**BASE, "region": "r2", "gpu_type": "B200_SXM"}),
        replaceReasons=["region", "gpu_type"],
    ),
    _step("delete", "gone", _state("gone", BASE, num_gpus=8, allocated_preemptible_gpus=4), None),
    _step("create", "new", None, _state("new", {**BASE, "num_gpus": UNKNOWN})),
    # an old state whose inputs lack the GPU type its outputs have (an older provider's)
    _step(
        "same",
        "idle",
        _without_gpu_type(_state("idle", BASE, num_gpus=8)),
        _state("idle", BASE),
    ),
    # a floor lowered with the live target inside the new range: nothing PUT, no field changed
    _step(
        "update",
        "shrink",
        _state(
            "shrink",
            {**RANGED, "num_preemptible_gpus": 16},
            num_gpus=8,
            desired_preemptible_gpus=16,
        ),
        _state("shrink", {**RANGED, "num_preemptible_gpus": 8, "__provider": "other"}),
    ),
    # auto_scale's floor raised above the live standard count: num_gpus PUT 16 -> 24
    _step(
        "update",
        "autogrow",
        _state("autogrow", {**AUTO, "num_gpus": 16}, num_gpus=16),
        _state("autogrow", {**AUTO, "num_gpus": 24}),
    ),
    # a range dropped: the old side is shown at its declared floor, not the live value
    _step(
        "update",
        "unrange",
        _state(
            "unrange",
            {**RANGED, "num_preemptible_gpus": 20},
            num_gpus=8,
            desired_preemptible_gpus=20,
        ),
        _state("unrange", {**BASE, "num_gpus": 16, "num_preemptible_gpus": 24}),
    ),
]


def _plan(
    steps: list[dict[str, Any]] = STEPS, prices: PriceTable = PRICES, **config: Any
) -> StackPlan:
    document = {
        "config": {f"{PROJECT}:clusters": "{}", **{f"{PROJECT}:{k}": v for k, v in config.items()}},
        "steps": steps,
        "changeSummary": {},
    }
    return build_plan(document, "dev.json", prices)


def _clusters(plan: StackPlan) -> list[ClusterChange]:
    return [c for c in plan.changes["clusters"] if isinstance(c, ClusterChange)]


def _preview() -> Any:
    return preview_of(BY_TYPE[CLUSTER_TYPE])


TABLE = [
    "> [!NOTE]",
    "> **Not refreshed:** the allocated GPUs and the *stored* values inside declared ranges are "
    "the stack's stored state as of its last refresh or update (last written 2026-03-04 05:06 "
    "UTC), not Together's current figures. `pulumi preview --refresh` reads current ones (the "
    "GitOps preview workflow runs it).",
    "",
    "| Cluster | Action | GPU type | Standard GPUs | Preemptible target | Allocated as of "
    "2026-03-04 05:06 UTC | Est. cost/h | Δ/h |",
    "|---|---|---|--:|--:|--:|--:|--:|",
    "| `grow` | in-place update | H100_SXM | 8 | 24\u201332, stored 16 | 12 | $32.00 → $40.00 "
    "| +$8.00 |",
    "| `auto` | unchanged | H100_SXM | 8\u201332, stored 16 | 16 | 0 | $32.00 | ±$0.00 |",
    "| `move` | **replace** | H100_SXM → B200_SXM | 8 | 16 | 16 | $32.00 → $64.00 | +$32.00 |",
    "| `gone` | **delete** | H100_SXM | 8 → — | 16 → — | 4 | $32.00 → — | -$32.00 |",
    "| `new` | create | H100_SXM | — → ? | — → 16 | — | — → ? | ? |",
    "| `idle` | unchanged | H100_SXM | 8 | 16 | ? | $32.00 | ±$0.00 |",
    "| `shrink` | in-place update | H100_SXM | 8 | 8\u201332, stored 16 | ? | $24.00 | ±$0.00 |",
    "| `autogrow` | in-place update | H100_SXM | 24\u201332, stored 16 | 16 | ? | $48.00 → $64.00 "
    "| +$16.00 |",
    "| `unrange` | in-place update | H100_SXM | 8 → 16 | 24\u201332 → 24, stored 20 | ? | "
    "$40.00 → $56.00 | +$16.00 |",
    "",
    "Declared ranges (the live value may move inside without a change; costs above are at the "
    "floor):",
    "- `grow`: preemptible 24\u201332, stored 16: $40.00/h at the floor, $48.00/h at the ceiling",
    "- `auto`: standard 8\u201332, stored 16 (auto_scale): $32.00/h at the floor, $80.00/h at the "
    "ceiling",
    "- `shrink`: preemptible 8\u201332, stored 16: $24.00/h at the floor, $48.00/h at the ceiling",
    "- `autogrow`: standard 24\u201332, stored 16 (auto_scale): $64.00/h at the floor, $80.00/h at "
    "the ceiling",
    "",
    "Changed fields:",
    "- `grow`.`labels`: unset → `{'team': 'a'}`",
    "- `grow`.`num_preemptible_gpus`: `16` → `24`",
    "- `move`.`gpu_type`: `H100_SXM` → `B200_SXM` (forces replacement)",
    "- `move`.`region`: `r` → `r2` (forces replacement)",
    "- `idle`.`gpu_type`: unset → `H100_SXM`",
    "- `autogrow`.`num_gpus`: `16` → `24`",
    "- `unrange`.`max_preemptible_gpus`: `32` → unset",
    "- `unrange`.`num_gpus`: `8` → `16`",
    "- `unrange`.`num_preemptible_gpus`: `20` → `24`",
    "",
    "**Listed clusters:** $272.00/h → $312.00/h (Δ +$40.00/h, ≈ +$29,200.00/month); clusters "
    "whose size is only known after apply are left out",
    "",
]


def test_the_table_word_for_word() -> None:
    plan = _plan()
    assert _preview().table(plan.changes["clusters"], plan, DESTRUCTIVE) == TABLE


def test_what_a_deletion_and_a_replacement_take_away() -> None:
    by_name = {c.name: c for c in _clusters(_plan())}
    assert _preview().loss(by_name["move"]) == (
        "`move` is **replaced** (because of `region`, `gpu_type`): its 8 standard GPUs and 16 "
        "allocated preemptible GPUs (as of the last refresh) go away; the old cluster is deleted "
        "first, so there is no capacity until the new one is Ready"
    )
    assert _preview().loss(by_name["gone"]) == (
        "`gone` is **deleted**: its 8 standard GPUs and 4 allocated preemptible GPUs (as of the "
        "last refresh) are released"
    )
    unknown = replace(by_name["gone"], old=None, allocated=None)
    assert _preview().loss(unknown) == (
        "`gone` is **deleted**: its ? standard GPUs and ? allocated preemptible GPUs (as of the "
        "last refresh) are released"
    )


REFRESHED = [
    _step(
        "refresh",
        "swap",
        _state("swap", BASE, num_gpus=8, allocated_preemptible_gpus=16),
        _state("swap", BASE, num_gpus=8, allocated_preemptible_gpus=16),
    ),
    _step(
        "replace",
        "swap",
        _state("swap", BASE, num_gpus=8, allocated_preemptible_gpus=16),
        _state("swap", {**BASE, "cluster_name": "swap-2"}),
    ),
]


def test_a_refreshed_preview_says_so_and_a_create_first_replacement_bills_twice() -> None:
    plan = _plan(REFRESHED)
    (swap,) = _clusters(plan)
    assert swap.op == "refresh/replace" and swap.refreshed
    lines = _preview().table([swap], plan, DESTRUCTIVE)
    assert lines[0] == (
        "| Cluster | Action | GPU type | Standard GPUs | Preemptible target | Allocated now "
        "(refreshed) | Est. cost/h | Δ/h |"
    )
    assert _preview().loss(swap) == (
        "`swap` is **replaced** (because of a field that cannot change in place): its 8 standard "
        "GPUs and 16 allocated preemptible GPUs go away; the new cluster is created first, so "
        "both bill until the old one is deleted"
    )


def test_a_preview_without_a_state_time_says_it_is_unknown() -> None:
    steps = [{**s, "oldState": {**s["oldState"], "modified": None}} for s in STEPS[:1]]
    plan = _plan(steps)
    lines = _preview().table(plan.changes["clusters"], plan, DESTRUCTIVE)
    assert "as of its last refresh or update (time unknown), not" in lines[1]
    assert "| Allocated as of the last refresh |" in lines[3]


def test_the_notes_name_where_each_rate_comes_from() -> None:
    plan = _plan()
    assert _preview().notes(plan.changes["clusters"], plan) == [
        "On-demand prices: B200_SXM, H100_SXM from `rates.json` (test rates, as of 2026-01-01).",
        "Preemptible GPUs are priced at 50% of the on-demand rate; costs assume the preemptible "
        "target is filled (Together bills only allocated GPUs).",
    ]
    placeholder = replace(PRICES, placeholder=True)
    own = _plan(prices=placeholder, pricesPerGpuHour={"B200_SXM": 5.0})
    (note, _) = _preview().notes(own.changes["clusters"], own)
    assert note == (
        "On-demand prices: the stack's own rates from `proj:pricesPerGpuHour`: B200_SXM $5.00 per "
        "GPU-hour; † PLACEHOLDER rates for H100_SXM from `rates.json` (not a price list, as of "
        "2026-01-01): replace them there, pass `--prices FILE`, or set this stack's under "
        "`proj:pricesPerGpuHour`."
    )
    both = _plan(prices=placeholder, pricesPerGpuHour={"B200_SXM": 5.0, "H100_SXM": 3.0})
    (note, _) = _preview().notes(both.changes["clusters"], replace(both, project=None))
    assert note == (
        "On-demand prices: the stack's own rates from `<project>:pricesPerGpuHour`: "
        "B200_SXM $5.00, H100_SXM $3.00 per GPU-hour."
    )
    (note, _) = _preview().notes([], plan)  # no cluster shown: every rate of the table
    assert note.startswith("On-demand prices: B200_SXM, H100_SXM, H200_SXM from `rates.json`")


def test_placeholder_costs_are_marked_and_explained_under_the_table() -> None:
    plan = _plan(STEPS[:1], replace(PRICES, placeholder=True))
    lines = _preview().table(plan.changes["clusters"], plan, DESTRUCTIVE)
    assert "| $32.00† → $40.00† | +$8.00† |" in lines[5]
    assert lines[6:9] == ["", lines[7], ""] and lines[7].startswith("† computed from a placeholder")
    assert lines[-2] == (
        "**Listed clusters:** $32.00†/h → $40.00†/h (Δ +$8.00†/h, ≈ +$5,840.00†/month) † "
        "placeholder rates, not a price list"
    )
