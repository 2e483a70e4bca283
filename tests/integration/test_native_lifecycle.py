"""The native plugin (`together:index:Cluster`) through the real engine against the simulator:
the lifecycle scenarios the dynamic provider passes, one behaviour each."""

from __future__ import annotations

from typing import Any

import pytest
import together
from pulumi import automation as auto

from testkit.pulumi_env import PulumiEnv
from testkit.sim import SimulatorProcess
from tests.clusters import live_clusters, preview_error, set_clusters
from tests.native import native_outputs, native_stack
from tests.specs import CLUSTER_SPEC as BASE
from together_api.client import TogetherClient

FAST = {"time_scale": 600}  # 6 simulated minutes of provisioning = 0.6 s
pytestmark = [pytest.mark.engine, pytest.mark.parametrize("simulator", [FAST], indirect=True)]


def _stack(env: PulumiEnv, sim: SimulatorProcess, **spec: Any) -> auto.Stack:
    return native_stack(env, sim, {"train": {**BASE, **spec}})[0]


def _set_spec(stack: auto.Stack, **spec: Any) -> None:
    set_clusters(stack, {"train": {**BASE, **spec}})


def _stored(env: PulumiEnv) -> dict[str, Any]:
    (outputs,) = native_outputs(env)
    return outputs


def test_create_with_a_target_reports_progress_on_the_cluster_and_ints_as_ints(
    native_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    stack = _stack(native_env, simulator, num_preemptible_gpus=16)
    events: list[auto.EngineEvent] = []
    outputs = stack.up(on_event=events.append).outputs
    assert outputs["train_status"].value == "Ready"
    assert outputs["train_desired"].value == 16
    assert outputs["train_int_counts"].value == "int"  # not 8.0: the declared type casts it
    (cluster,) = live_clusters(simulator)
    assert (cluster.cluster_id, cluster.num_gpus) == (outputs["train_id"].value, 8)
    assert cluster.desired_preemptible_gpus == 16
    progress = [
        (e.diagnostic_event.urn or "", e.diagnostic_event.message)
        for e in events
        if e.diagnostic_event is not None
    ]
    created = [urn for urn, message in progress if "created " + cluster.cluster_id in message]
    assert created, progress
    assert created[0].endswith("together:index:Cluster::train")  # the cluster's, not the Stack's


def test_target_change_previews_in_place_and_applies_with_exactly_one_put(
    native_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    stack = _stack(native_env, simulator, num_preemptible_gpus=8)
    first_id = stack.up().outputs["train_id"].value
    _set_spec(stack, num_preemptible_gpus=24)
    simulator.reset_requests()
    assert stack.preview().change_summary == {auto.OpType.UPDATE: 1, auto.OpType.SAME: 1}
    assert simulator.requests() == []  # preview is check + diff only
    result = stack.up()
    assert result.summary.resource_changes == {"update": 1, "same": 1}
    assert [(r["method"], r["status"]) for r in simulator.requests()] == [("PUT", 200)]
    assert result.outputs["train_id"].value == first_id
    assert result.outputs["train_desired"].value == 24
    assert result.outputs["train_kube_config"].value  # no wiped outputs


def test_zero_standard_spec_fails_at_preview_with_our_sentence_and_no_api_call(
    native_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    stack = _stack(native_env, simulator, num_gpus=0, num_preemptible_gpus=16)
    error = preview_error(stack)
    assert "num_gpus=0 leaves no standard node" in error
    assert "num_gpus >= 8" in error
    assert "Traceback" not in error
    assert simulator.requests() == []


def test_conversion_fails_at_preview_without_api_calls(
    native_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    stack = _stack(native_env, simulator, num_gpus=16, num_preemptible_gpus=8)
    stack.up()
    _set_spec(stack, num_gpus=8, num_preemptible_gpus=16)
    simulator.reset_requests()
    error = preview_error(stack)
    assert "converts standard nodes to preemptible" in error
    assert simulator.requests() == []


def test_region_change_replaces_deleting_the_old_cluster_first(
    native_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    stack = _stack(native_env, simulator)
    old_id = stack.up().outputs["train_id"].value
    _set_spec(stack, region="us-west-2")
    preview = stack.preview()
    assert preview.change_summary == {auto.OpType.REPLACE: 1, auto.OpType.SAME: 1}
    simulator.reset_requests()
    result = stack.up()
    assert result.summary.resource_changes == {"replace": 1, "same": 1}
    (cluster,) = live_clusters(simulator)
    assert (cluster.cluster_id != old_id, cluster.region) == (True, "us-west-2")
    calls = [r["method"] for r in simulator.requests() if r["method"] in ("POST", "DELETE")]
    assert calls == ["DELETE", "POST"]  # same name: delete before create


def test_refresh_after_an_out_of_band_target_change_shows_drift(
    native_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    stack = _stack(native_env, simulator, num_preemptible_gpus=16)
    cluster_id = stack.up().outputs["train_id"].value
    sdk = together.Together(api_key=simulator.api_key, base_url=simulator.root_url)
    sdk.clusters.update(cluster_id, num_preemptible_gpus=32)
    refresh = stack.refresh()
    assert refresh.summary.resource_changes == {"update": 1, "same": 1}
    assert _stored(native_env)["numPreemptibleGpus"] == 32
    # The program still declares 16: the next preview puts it back, in place.
    assert stack.preview().change_summary == {auto.OpType.UPDATE: 1, auto.OpType.SAME: 1}


def test_refresh_after_a_reclaim_shows_no_drift(
    native_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    stack = _stack(native_env, simulator, num_preemptible_gpus=16)
    cluster_id = stack.up().outputs["train_id"].value
    simulator.advance(600)  # let the preemptible target fill
    assert simulator.reclaim(cluster_id, nodes=1)
    assert stack.refresh().summary.resource_changes == {"same": 2}
    events = _stored(native_env)["preemptionEvents"]
    assert [e["reason"] for e in events] == ["TogetherPreemptionNotified"]
    assert stack.preview().change_summary == {auto.OpType.SAME: 2}


def test_destroy_removes_the_cluster(native_env: PulumiEnv, simulator: SimulatorProcess) -> None:
    stack = _stack(native_env, simulator, num_preemptible_gpus=8)
    stack.up()
    assert len(live_clusters(simulator)) == 1
    stack.destroy()
    with TogetherClient(api_key=simulator.api_key, base_url=simulator.base_url) as client:
        assert client.list_clusters() == []


def test_failed_provisioning_leaves_nothing_and_says_so_without_a_traceback(
    native_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    simulator.set_faults(fail_provisioning=True)
    stack = _stack(native_env, simulator)
    with pytest.raises(auto.CommandError) as failed:
        stack.up()
    error = str(failed.value)
    assert "was deleted so nothing is left billing" in error
    assert "Traceback" not in error
    assert ".py" not in error  # no source locations either
    with TogetherClient(api_key=simulator.api_key, base_url=simulator.base_url) as client:
        assert client.list_clusters() == []


def test_refresh_after_the_cluster_was_deleted_elsewhere_drops_it(
    native_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    stack = _stack(native_env, simulator)
    cluster_id = stack.up().outputs["train_id"].value
    with TogetherClient(api_key=simulator.api_key, base_url=simulator.base_url) as client:
        client.delete_cluster(cluster_id)
    simulator.advance(600)
    assert stack.refresh().summary.resource_changes == {"delete": 1, "same": 1}
    assert native_outputs(native_env) == []
    assert stack.preview().change_summary == {auto.OpType.CREATE: 1, auto.OpType.SAME: 1}
