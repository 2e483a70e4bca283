"""How the preview reads a `pulumi preview --json` document into a plan
(`together_provider.preview.plan`), on documents made here: every refusal word for word with the
file it names, URNs, the provider's words out of the engine's diagnostics, the stack's flags and
when its state was written, and the small readers the kinds' previews share."""

from __future__ import annotations

from typing import Any

import pytest

from together_provider.preview import PreviewInputError, build_plan, load_price_table
from together_provider.preview.plan import state_time
from together_provider.preview_parts.steps import Action, count, known_str, merge, props_of
from together_provider.registry import BY_TYPE

CLUSTER_TYPE = next(t for t in BY_TYPE if t.endswith("Cluster"))
PROJECT = "proj"
URN = f"urn:pulumi:dev::{PROJECT}::pulumi:pulumi:Stack${CLUSTER_TYPE}::train"
STATE = {"inputs": {"cluster_name": "train", "gpu_type": "H100_SXM", "num_gpus": 8}}


def _doc(**extra: Any) -> dict[str, Any]:
    return {
        "config": {f"{PROJECT}:clusters": "{}"},
        "steps": [{"op": "same", "urn": URN, "oldState": STATE, "newState": STATE}],
        "changeSummary": {},
        **extra,
    }


def _refusal(document: object) -> PreviewInputError:
    with pytest.raises(PreviewInputError) as caught:
        build_plan(document, "dev.json", load_price_table())
    assert caught.value.source == "dev.json"
    return caught.value


@pytest.mark.parametrize(
    ("document", "said"),
    [
        (
            {"config": {}},
            "dev.json: not a `pulumi preview --json` document (expected an object with 'steps' "
            "and 'changeSummary') (fix: pass the JSON that `pulumi preview --json` printed on "
            "stdout)",
        ),
        ({"steps": {"op": "same"}}, "dev.json: 'steps' must be a list of objects"),
        ({"steps": [1]}, "dev.json: 'steps' must be a list of objects"),
        (
            {"changeSummary": {}, "diagnostics": "x"},
            "dev.json: 'diagnostics' must be a list of objects",
        ),
        (_doc(config="proj:clusters"), "dev.json: 'config' and 'changeSummary' must be objects"),
        (_doc(changeSummary=[1]), "dev.json: 'config' and 'changeSummary' must be objects"),
        (
            {"changeSummary": {}},
            "dev.json: no Together cluster in this preview: no step of type "
            f"{CLUSTER_TYPE} and no '<project>:clusters' config (project unknown) (fix: is this "
            "the preview of another project? Run it in this repository's program)",
        ),
    ],
)
def test_a_document_of_the_wrong_shape_is_refused_in_full(document: object, said: str) -> None:
    assert str(_refusal(document)) == said


def test_a_preview_of_another_project_names_that_project() -> None:
    other = {"steps": [{"op": "same", "urn": "urn:pulumi:dev::web::aws:s3:Bucket::b"}]}
    assert "config (project web) (fix:" in str(_refusal(other))


def test_the_stack_and_project_come_from_the_first_urn_diagnostics_included() -> None:
    plan = build_plan(
        {
            "changeSummary": {},
            "config": {"web:clusters": "{}"},
            "diagnostics": [{"urn": "urn:pulumi:prod::web::pulumi:pulumi:Stack::web-prod"}],
        },
        "prod.json",
        load_price_table(),
    )
    assert (plan.stack, plan.project, plan.source) == ("prod", "web", "prod.json")
    assert build_plan(_doc(), "x.json", load_price_table()).stack == "dev"
    assert build_plan(_doc(), "x.json", load_price_table(), stack_name="mine").stack == "mine"


def test_diagnostics_keep_the_providers_own_words() -> None:
    diagnostics = [
        {"severity": "warning", "message": "error: only a warning"},
        {
            "severity": "error",
            "urn": URN,
            "message": "  error: resource 'train': property num_gpus value {0} has a problem: "
            "cluster 'train': a has a problem: b \n",
        },
        {"severity": "error", "message": "error: something else, error: twice"},
        {"severity": "error", "urn": "not a urn"},
    ]
    plan = build_plan(_doc(diagnostics=diagnostics), "dev.json", load_price_table())
    assert [(r.resource, r.message) for r in plan.rejections] == [
        ("train", "cluster 'train': a has a problem: b")
    ]
    assert plan.errors == ("something else, error: twice", "")


def test_a_urn_is_stack_project_type_and_a_name_that_may_hold_colons() -> None:
    name = f"urn:pulumi:dev::{PROJECT}::pulumi:pulumi:Stack${CLUSTER_TYPE}::a::b"
    doc = _doc(steps=[{"op": "create", "urn": name, "newState": STATE}])
    (change,) = build_plan(doc, "dev.json", load_price_table()).changes["clusters"]
    assert change.name == "a::b"
    not_pulumi = f"urn:other:dev::{PROJECT}::pulumi:pulumi:Stack${CLUSTER_TYPE}::c"
    doc = _doc(steps=[*_doc()["steps"], {"op": "create", "urn": not_pulumi, "newState": STATE}])
    assert [
        c.name for c in build_plan(doc, "dev.json", load_price_table()).changes["clusters"]
    ] == ["train"]


@pytest.mark.parametrize(
    ("value", "blocks"),
    [(None, False), (False, False), ("false", False), (True, True), ("true", True)],
)
def test_fail_on_placeholder_prices_is_a_project_flag(value: object, blocks: bool) -> None:
    config = {f"{PROJECT}:clusters": "{}"}
    if value is not None:
        config[f"{PROJECT}:failOnPlaceholderPrices"] = value  # type: ignore[assignment]
    plan = build_plan(_doc(config=config), "dev.json", load_price_table())
    assert plan.fail_on_placeholder is blocks


def test_a_flag_of_another_project_or_of_no_project_is_not_read() -> None:
    config = {f"{PROJECT}:clusters": "{}", "other:failOnPlaceholderPrices": "maybe"}
    assert not build_plan(_doc(config=config), "dev.json", load_price_table()).fail_on_placeholder
    no_urn = {"changeSummary": {}, "config": {"None:failOnPlaceholderPrices": "true"}}
    with pytest.raises(PreviewInputError, match="no Together cluster"):
        build_plan(no_urn, "dev.json", load_price_table())


def test_a_flag_that_is_not_a_boolean_is_refused_with_the_command_to_set_it() -> None:
    config = {f"{PROJECT}:clusters": "{}", f"{PROJECT}:failOnPlaceholderPrices": "yes"}
    assert str(_refusal(_doc(config=config))) == (
        "dev.json: config proj:failOnPlaceholderPrices must be true or false, got 'yes' "
        "(fix: set it with `pulumi config set failOnPlaceholderPrices true` (or false))"
    )


def test_a_stacks_own_rates_are_read_from_its_config_naming_the_file() -> None:
    config = {f"{PROJECT}:clusters": "{}", f"{PROJECT}:pricesPerGpuHour": {"H100": 1}}
    with pytest.raises(PreviewInputError) as caught:
        build_plan(_doc(config=config), "dev.json", load_price_table())
    error = caught.value
    assert error.source == "dev.json (config proj:pricesPerGpuHour)"
    assert str(error).startswith("dev.json (config proj:pricesPerGpuHour): unknown GPU type")


def test_when_the_state_was_written_is_the_latest_utc_time_of_its_steps() -> None:
    def old(modified: object) -> dict[str, Any]:
        return {"oldState": {"modified": modified}}

    steps = [
        old("2026-11-30T10:05:00Z"),
        old("2026-12-01T09:00:00.123+00:00"),
        old("2026-12-02T09:00:00+01:00"),  # not UTC: left out
        old(None),
        {"oldState": None},
        {},
    ]
    assert state_time(steps) == "2026-12-01 09:00 UTC"
    assert state_time([old("2026-12-02T09:00:00+01:00")]) is None
    assert state_time([old("")]) is None


def test_a_refreshed_preview_has_no_state_time() -> None:
    timed = {**STATE, "modified": "2026-11-30T10:05:00Z"}
    step = {"op": "same", "urn": URN, "oldState": timed, "newState": timed}
    assert build_plan(_doc(steps=[step]), "d", load_price_table()).state_time == (
        "2026-11-30 10:05 UTC"
    )
    refreshed = _doc(steps=[{**step, "op": "refresh"}, step])
    plan = build_plan(refreshed, "d", load_price_table())
    assert plan.refreshed and plan.state_time is None


def test_the_small_readers() -> None:
    assert [count(v) for v in (8, 8.0, 8.5, True, "8", None)] == [8, 8, None, None, None, None]
    assert count(16.0) == 16
    assert [known_str(v) for v in ("a", 1, None)] == ["a", None, None]
    assert known_str("04da6b54-80e4-46f7-96ec-b56ff0331ba9") is None
    assert props_of({"inputs": {"a": 1}}, "inputs") == {"a": 1}
    assert props_of({"inputs": [1]}, "inputs") == {}
    assert props_of(None, "inputs") == {}


def test_an_unknown_op_is_another_action_and_a_refresh_alone_still_has_states() -> None:
    ops, action, old, new, reasons = merge([{"op": "discard", "oldState": {"a": 1}}])
    assert (ops, action, old, new, reasons) == (["discard"], Action.OTHER, {"a": 1}, None, ())
    only_refresh = merge([{"op": "refresh", "oldState": {"a": 1}, "newState": {"a": 2}}])
    assert only_refresh[1:4] == (Action.SAME, {"a": 1}, {"a": 2})
