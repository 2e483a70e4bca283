"""The whole cluster Together offers, through the real engine against the simulator on both
hosts (issue 49): each field of Together's update request previews as one update of that input
alone and `up` makes exactly one PUT whose body is only that field; a capacity pool change
previews as a replace; a reservation that would shorten is refused at preview with no call; the
outputs a user checks before acting are stored."""

from __future__ import annotations

import re
from typing import Any

import pytest
from pulumi import automation as auto

from testkit.pulumi_env import PulumiEnv
from testkit.sim import SimulatorProcess
from tests.clusters import live_clusters, preview_error, set_clusters
from tests.hosts import Host
from tests.specs import CLUSTER_SPEC as BASE

API_KEY = "sk-test-key-5f1e9c3a7b"
FAST = {"time_scale": 600, "api_key": API_KEY}
pytestmark = [pytest.mark.engine, pytest.mark.parametrize("simulator", [FAST], indirect=True)]

DASHBOARD_OFF: dict[str, Any] = {
    "name": "dash",
    "add_on_type": "dashboard",
    "config": {"dashboard": {"enabled": False}},
}
RESERVED: dict[str, Any] = {
    **BASE,
    "billing_type": "RESERVED",
    "duration_days": 30,
    "num_reserved_gpus": 8,
    "reservation_end_time": "2027-06-30T00:00:00Z",
    "cluster_config": {"load_balancer": "NONE", "observability": {"enabled": False}},
    "add_ons": [DASHBOARD_OFF],
}
"""A reserved cluster that sets the update request's fields (besides the counts)."""

STEPS: tuple[tuple[str, dict[str, Any], dict[str, Any]], ...] = (
    (
        "reservation_end_time",
        {"reservation_end_time": "2027-07-31T00:00:00Z"},
        {"reservation_end_time": "2027-07-31T00:00:00Z"},
    ),
    (
        "cluster_config",
        {"cluster_config": {"load_balancer": "NONE", "observability": {"enabled": True}}},
        {"cluster_config": {"load_balancer": "NONE", "observability": {"enabled": True}}},
    ),
    ("num_reserved_gpus", {"num_reserved_gpus": 0}, {"num_reserved_gpus": 0}),
    (
        "add_ons",
        {"add_ons": [{**DASHBOARD_OFF, "config": {"dashboard": {"enabled": True}}}]},
        {"add_ons": [{"name": "dash", "config": {"dashboard": {"enabled": True}}}]},
    ),
)
"""(input, its new value on top of what came before, the PUT body expected)."""


def _changed_inputs(step: auto.StepEventMetadata) -> list[str]:
    """The inputs an update step changes: those whose old and new values differ (the dynamic
    host's diff names none itself, only the native one does), snake_case."""
    old = (step.old.inputs if step.old else None) or {}
    new = (step.new.inputs if step.new else None) or {}
    keys = {k for k in old.keys() | new.keys() if not k.startswith("__")}
    return sorted(_snake(k) for k in keys if old.get(k) != new.get(k))


def _diffs(stack: auto.Stack, type_: str) -> tuple[dict[auto.OpType, int], list[list[str]]]:
    """The preview's change summary and, per updated resource of `type_`, the inputs it changes;
    where the provider names its diff (the native host), that diff too must be those alone."""
    events: list[auto.EngineEvent] = []
    summary = dict(stack.preview(on_event=events.append).change_summary)
    steps = [
        e.resource_pre_event.metadata
        for e in events
        if e.resource_pre_event is not None
        and e.resource_pre_event.metadata.op == auto.OpType.UPDATE
        and e.resource_pre_event.metadata.type == type_
    ]
    for step in steps:
        if step.diffs:
            assert sorted(_snake(k) for k in step.diffs) == _changed_inputs(step)
    return summary, [_changed_inputs(step) for step in steps]


def _snake(name: str) -> str:
    """The native host's camelCase property names as the table's; snake_case stays."""
    return re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), name)


def test_each_update_field_is_one_update_and_one_put_of_it_alone(
    host: Host, env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    stack = host.cluster_stack(env, simulator, {"train": RESERVED})
    outputs = stack.up().outputs
    assert outputs["train_status"].value == "Ready"
    first_id = outputs["train_id"].value
    # An input set in the program reads back; one left unset is an output resolving to None.
    assert outputs["train_reservation_end_time"].value == "2027-06-30T00:00:00Z"
    assert outputs.get("train_capacity_pool_id", auto.OutputValue(None, False)).value is None

    # What a user checks before acting is stored: nodes, first Ready, add-ons, the end.
    (stored,) = host.stored_clusters(env)
    assert [(n["compute_class"], n["status"]) for n in stored["worker_nodes"]] == [
        ("standard", "Ready")
    ]
    assert stored["first_ready_at"]
    assert stored["add_on_states"] == [{"name": "dash", "state": {}}]
    assert stored["reservation_ends_at"] == "2027-06-30T00:00:00Z"

    spec = dict(RESERVED)
    for name, change, body in STEPS:
        spec |= change
        set_clusters(stack, {"train": spec})
        simulator.reset_requests()
        summary, diffs = _diffs(stack, host.cluster_type)
        assert summary == {auto.OpType.UPDATE: 1, auto.OpType.SAME: 1}, name
        assert diffs == [[name]], name
        assert simulator.requests() == [], name  # preview: check and diff only
        result = stack.up()
        assert result.summary.resource_changes == {"update": 1, "same": 1}, name
        puts = [(r["method"], r.get("body")) for r in simulator.requests()]
        assert puts == [("PUT", body)], name
        assert result.outputs["train_id"].value == first_id

    (cluster,) = live_clusters(simulator)
    assert cluster.num_reserved_gpus == 0
    assert cluster.reservation_end_time is not None
    assert cluster.reservation_end_time.isoformat().startswith("2027-07-31T00:00:00")
    assert cluster.cluster_config == {"load_balancer": "NONE", "observability": {"enabled": True}}
    (stored,) = host.stored_clusters(env)
    assert stored["add_on_states"] == [{"name": "dash", "state": {"dashboard": {}}}]
    assert stored["reservation_ends_at"] == "2027-07-31T00:00:00Z"

    # A shorter reservation is refused at preview, naming the end it may not go below.
    set_clusters(stack, {"train": spec | {"reservation_end_time": "2027-07-01T00:00:00Z"}})
    simulator.reset_requests()
    error = preview_error(stack)
    assert "shortens the running reservation" in error
    assert "set reservation_end_time to 2027-07-31T00:00:00Z or later" in error
    assert simulator.requests() == []

    # Another capacity pool is another cluster: the preview says replace before any call.
    set_clusters(stack, {"train": spec | {"capacity_pool_id": "pool-b"}})
    assert stack.preview().change_summary == {auto.OpType.REPLACE: 1, auto.OpType.SAME: 1}
    assert simulator.requests() == []
