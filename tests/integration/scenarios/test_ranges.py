"""Declared ranges through the real engine, on both hosts: a preemptible target moved through the
API inside [num_preemptible_gpus, max_preemptible_gpus] is no change (refresh, then preview
--expect-no-changes); outside it, one PUT back to the nearest bound; a bad ceiling is refused at
preview with no API call. Together's auto_scale: a live num_gpus inside the range is no drift.
"""

from __future__ import annotations

from typing import Any

import pytest
from pulumi import automation as auto

from testkit.pulumi_env import PulumiEnv
from testkit.sim import SimulatorProcess
from tests.clusters import live_clusters, preview_error, set_clusters, together_client
from tests.hosts import Host
from tests.specs import CLUSTER_SPEC as BASE
from together_api.wire import ClusterUpdateRequest

FAST = {"time_scale": 600}
pytestmark = [pytest.mark.engine, pytest.mark.parametrize("simulator", [FAST], indirect=True)]
RANGE = {"num_preemptible_gpus": 8, "max_preemptible_gpus": 32, "project_id": "proj-ml"}


def _stack(host: Host, env: PulumiEnv, sim: SimulatorProcess, **spec: Any) -> auto.Stack:
    return host.cluster_stack(env, sim, {"train": {**BASE, **spec}})


def _move_target(sim: SimulatorProcess, cluster_id: str, target: int) -> None:
    """What an autoscaler or `tg beta clusters update --num-preemptible-gpus` does."""
    with together_client(sim) as client:
        client.update_cluster(cluster_id, ClusterUpdateRequest(num_preemptible_gpus=target))


def _no_changes(stack: auto.Stack) -> None:
    """`pulumi preview --refresh --expect-no-changes` passes (it raises on any change)."""
    stack.preview(refresh=True, expect_no_changes=True)


def test_a_target_moved_inside_the_range_is_no_change_and_outside_one_put_to_the_bound(
    host: Host, env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    stack = _stack(host, env, simulator, **RANGE)
    cluster_id = stack.up().outputs["train_id"].value

    # Moved to 24 through the API, as an autoscaler would: no diff, now or after a refresh.
    _move_target(simulator, cluster_id, 24)
    simulator.reset_requests()
    _no_changes(stack)
    assert [r["method"] for r in simulator.requests()] == ["GET"]  # the refresh's read only
    # The refresh asks the provider's diff too: inside the range it is no drift, and the state
    # now shows the live target beside the range.
    assert stack.refresh().summary.resource_changes == {"same": 2}
    (stored,) = host.stored_clusters(env)
    assert (stored["desired_preemptible_gpus"], stored["max_preemptible_gpus"]) == (24, 32)
    assert stack.preview(expect_no_changes=True).change_summary == {auto.OpType.SAME: 2}
    outputs = stack.up().outputs  # nothing to do: the live 24 stays
    assert outputs["train_desired"].value == 24
    (cluster,) = live_clusters(simulator)
    assert cluster.desired_preemptible_gpus == 24

    # Moved above the ceiling: one in-place update, one PUT, to the ceiling (not the floor).
    _move_target(simulator, cluster_id, 48)
    stack.refresh()
    assert stack.preview().change_summary == {auto.OpType.UPDATE: 1, auto.OpType.SAME: 1}
    simulator.reset_requests()
    result = stack.up()
    assert result.summary.resource_changes == {"update": 1, "same": 1}
    assert [(r["method"], r["status"]) for r in simulator.requests()] == [("PUT", 200)]
    assert result.outputs["train_desired"].value == 32
    (cluster,) = live_clusters(simulator)
    assert cluster.desired_preemptible_gpus == 32
    _no_changes(stack)  # (below the floor it goes up to the floor: tests/unit/test_ranges.py)


def test_a_bad_ceiling_is_refused_at_preview_with_no_api_call(
    host: Host, env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    stack = _stack(host, env, simulator, **{**RANGE, "max_preemptible_gpus": 20})
    simulator.reset_requests()
    error = preview_error(stack)
    assert "max_preemptible_gpus=20 is not a multiple of 8" in error and "use 16 or 24" in error
    assert "Traceback" not in error
    set_clusters(stack, {"train": {**BASE, **RANGE, "max_preemptible_gpus": 0}})
    error = preview_error(stack)
    assert "max_preemptible_gpus=0 is below num_preemptible_gpus=8" in error
    assert "set max_preemptible_gpus to at least 8" in error  # the fix
    assert simulator.requests() == []


def test_a_live_num_gpus_inside_auto_scale_is_no_drift(
    host: Host, env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    stack = _stack(host, env, simulator, auto_scale=True, auto_scale_max_gpus=32)
    cluster_id = stack.up().outputs["train_id"].value
    simulator.autoscale(cluster_id, num_gpus=24)  # Together's autoscaler adds two nodes
    _no_changes(stack)
    # The range is fixed at create: a new ceiling replaces the cluster.
    set_clusters(stack, {"train": {**BASE, "auto_scale": True, "auto_scale_max_gpus": 48}})
    assert stack.preview().change_summary == {auto.OpType.REPLACE: 1, auto.OpType.SAME: 1}
