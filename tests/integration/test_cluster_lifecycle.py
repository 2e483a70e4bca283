"""The Cluster resource through the real Pulumi engine against the simulator, one behaviour each."""

from __future__ import annotations

import json
from typing import Any

import pytest
import together
from pulumi import automation as auto

from testkit.pulumi_env import PulumiEnv, Secret
from testkit.sim import SimulatorProcess
from tests.clusters import (
    cluster_stack,
    live_clusters,
    preview_error,
    set_clusters,
    stored_outputs,
)
from tests.integration.conftest import PROGRAMS
from tests.specs import CLUSTER_SPEC as BASE
from together_api.client import TogetherClient
from together_api.kubeconfig import decode_kube_config
from together_api.wire import ClusterCreateRequest

API_KEY = "sk-test-key-5f1e9c3a7b"
FAST = {"time_scale": 600, "api_key": API_KEY}  # 6 simulated minutes of provisioning = 0.6 s
pytestmark = [pytest.mark.engine, pytest.mark.parametrize("simulator", [FAST], indirect=True)]


def _stack(env: PulumiEnv, sim: SimulatorProcess, **spec: Any) -> auto.Stack:
    """A stack declaring one cluster, `train`: the baseline spec with `spec` on top."""
    return cluster_stack(env, sim, {"train": {**BASE, **spec}})[0]


def _set_spec(stack: auto.Stack, **spec: Any) -> None:
    set_clusters(stack, {"train": {**BASE, **spec}})


def _stored(env: PulumiEnv) -> dict[str, Any]:
    return stored_outputs(env, env.root / "projects" / "cluster")


def _client(sim: SimulatorProcess) -> TogetherClient:
    return TogetherClient(api_key=sim.api_key, base_url=sim.base_url)


def test_create_with_a_preemptible_target(
    pulumi_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    stack = _stack(pulumi_env, simulator, num_preemptible_gpus=16)
    outputs = stack.up().outputs
    assert outputs["train_status"].value == "Ready"
    assert outputs["train_desired"].value == 16
    (cluster,) = live_clusters(simulator)
    assert cluster.cluster_id == outputs["train_id"].value
    assert cluster.num_gpus == 8
    assert cluster.desired_preemptible_gpus == 16


def test_target_change_previews_as_one_in_place_update(
    pulumi_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    stack = _stack(pulumi_env, simulator, num_preemptible_gpus=8)
    stack.up()
    _set_spec(stack, num_preemptible_gpus=24)
    simulator.reset_requests()
    preview = stack.preview()
    assert preview.change_summary == {auto.OpType.UPDATE: 1, auto.OpType.SAME: 1}
    assert simulator.requests() == []  # preview is check + diff only: no API call


def test_target_change_applies_with_exactly_one_put(
    pulumi_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    stack = _stack(pulumi_env, simulator, num_preemptible_gpus=8)
    first_id = stack.up().outputs["train_id"].value
    _set_spec(stack, num_preemptible_gpus=24)
    simulator.reset_requests()
    result = stack.up()
    assert result.summary.resource_changes == {"update": 1, "same": 1}
    assert [(r["method"], r["status"]) for r in simulator.requests()] == [("PUT", 200)]
    assert result.outputs["train_id"].value == first_id
    assert result.outputs["train_desired"].value == 24
    # The kubeconfig and status survive the update: no wiped outputs.
    assert result.outputs["train_status"].value == "Ready"
    assert result.outputs["train_kube_config"].value


def test_standard_count_update_puts_num_gpus_then_waits_for_ready(
    pulumi_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    stack = _stack(pulumi_env, simulator)
    first_id = stack.up().outputs["train_id"].value
    _set_spec(stack, num_gpus=16)
    simulator.reset_requests()
    result = stack.up()
    assert result.summary.resource_changes == {"update": 1, "same": 1}
    calls = [(r["method"], r["path"]) for r in simulator.requests()]
    one = "/v1/compute/clusters/{cluster_id}"
    assert calls[0] == ("PUT", one)
    # The standard count changed: the provider waits for Ready (a GET after the PUT) before the
    # update is reported done, so the next resource never sees a cluster still scaling.
    assert calls[1:] and all(call == ("GET", one) for call in calls[1:])
    assert result.outputs["train_id"].value == first_id
    assert result.outputs["train_status"].value == "Ready"
    (cluster,) = live_clusters(simulator)
    assert cluster.num_gpus == 16


def test_zero_standard_spec_fails_at_preview_without_api_calls(
    pulumi_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    stack = _stack(pulumi_env, simulator, num_gpus=0, num_preemptible_gpus=16)
    error = preview_error(stack)
    assert "num_gpus=0 leaves no standard node" in error
    assert "num_gpus >= 8" in error
    assert simulator.requests() == []


def test_conversion_fails_at_preview_without_api_calls(
    pulumi_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    stack = _stack(pulumi_env, simulator, num_gpus=16, num_preemptible_gpus=8)
    stack.up()
    _set_spec(stack, num_gpus=8, num_preemptible_gpus=16)
    simulator.reset_requests()
    error = preview_error(stack)
    assert "num_gpus" in error
    assert "convert" in error
    assert simulator.requests() == []


def test_region_change_previews_as_a_replacement(
    pulumi_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    stack = _stack(pulumi_env, simulator)
    stack.up()
    _set_spec(stack, region="us-west-2")
    preview = stack.preview()
    assert preview.change_summary.get(auto.OpType.REPLACE) == 1
    assert auto.OpType.UPDATE not in preview.change_summary


def test_refresh_after_a_reclaim_shows_no_drift(
    pulumi_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    stack = _stack(pulumi_env, simulator, num_preemptible_gpus=16)
    cluster_id = stack.up().outputs["train_id"].value
    simulator.advance(600)  # let the preemptible target fill
    assert simulator.reclaim(cluster_id, nodes=1)
    refresh = stack.refresh()
    assert refresh.summary.resource_changes == {"same": 2}
    events = _stored(pulumi_env)["preemption_events"]
    assert [e["reason"] for e in events] == ["TogetherPreemptionNotified"]
    assert stack.preview().change_summary == {auto.OpType.SAME: 2}


def test_refresh_after_an_out_of_band_target_change_shows_drift(
    pulumi_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    stack = _stack(pulumi_env, simulator, num_preemptible_gpus=16)
    cluster_id = stack.up().outputs["train_id"].value
    sdk = together.Together(api_key=simulator.api_key, base_url=simulator.root_url)
    sdk.clusters.update(cluster_id, num_preemptible_gpus=32)
    refresh = stack.refresh()
    assert refresh.summary.resource_changes == {"update": 1, "same": 1}
    assert _stored(pulumi_env)["desired_preemptible_gpus"] == 32
    assert _stored(pulumi_env)["num_preemptible_gpus"] == 32
    # The program still declares 16: the next preview puts it back, in place.
    assert stack.preview().change_summary == {auto.OpType.UPDATE: 1, auto.OpType.SAME: 1}


def test_adopts_an_existing_cluster(pulumi_env: PulumiEnv, simulator: SimulatorProcess) -> None:
    with _client(simulator) as client:
        existing = client.create_cluster(
            ClusterCreateRequest.model_validate(
                {**BASE, "cluster_name": "train", "billing_type": "ON_DEMAND"}
            )
        )
    simulator.advance(600)
    stack = _stack(
        pulumi_env, simulator, num_preemptible_gpus=8, adopt_cluster_id=existing.cluster_id
    )
    outputs = stack.up().outputs
    assert outputs["train_id"].value == existing.cluster_id
    assert outputs["train_desired"].value == 8  # the in-place difference was applied
    assert [c.cluster_id for c in live_clusters(simulator)] == [existing.cluster_id]


def test_destroy_removes_the_cluster(pulumi_env: PulumiEnv, simulator: SimulatorProcess) -> None:
    stack = _stack(pulumi_env, simulator, num_preemptible_gpus=8)
    stack.up()
    assert len(live_clusters(simulator)) == 1
    stack.destroy()
    with _client(simulator) as client:
        assert client.list_clusters() == []


def test_failed_provisioning_leaves_no_cluster(
    pulumi_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    simulator.set_faults(fail_provisioning=True)
    stack = _stack(pulumi_env, simulator)
    with pytest.raises(auto.CommandError) as failed:
        stack.up()
    assert "provisioning" in str(failed.value)
    assert "was deleted so nothing is left billing" in str(failed.value)
    with _client(simulator) as client:
        assert client.list_clusters() == []
    assert [r for r in simulator.requests() if r["method"] == "POST"] != []


def test_duplicate_name_guard_refuses_a_second_cluster(
    pulumi_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    with _client(simulator) as client:
        existing = client.create_cluster(
            ClusterCreateRequest.model_validate(
                {**BASE, "cluster_name": "train", "billing_type": "ON_DEMAND"}
            )
        )
    stack = _stack(pulumi_env, simulator)
    with pytest.raises(auto.CommandError) as failed:
        stack.up()
    assert "already exists" in str(failed.value)
    assert f"adopt_cluster_id={existing.cluster_id!r}" in str(failed.value)
    assert [c.cluster_id for c in live_clusters(simulator)] == [existing.cluster_id]


def test_state_holds_neither_api_key_nor_kubeconfig_in_plain_text(
    pulumi_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    stack = _stack(pulumi_env, simulator, num_preemptible_gpus=8)
    cluster_id = stack.up().outputs["train_id"].value
    with _client(simulator) as client:
        wire_value = client.get_cluster(cluster_id).kube_config
    kube_config = decode_kube_config(wire_value)  # Together sends base64; the output is YAML
    assert kube_config and kube_config != wire_value
    state = json.dumps(pulumi_env.exported_state(pulumi_env.root / "projects" / "cluster"))
    assert API_KEY not in state
    assert wire_value not in state
    assert kube_config not in state
    for line in kube_config.splitlines():
        if "token" in line:
            assert line.split(":", 1)[1].strip() not in state
    # The secret is there, encrypted: the output itself is still readable through Pulumi.
    assert stack.outputs()["train_kube_config"].value == kube_config


def test_region_change_replaces_deleting_the_old_cluster_first(
    pulumi_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    stack = _stack(pulumi_env, simulator)
    old_id = stack.up().outputs["train_id"].value
    _set_spec(stack, region="us-west-2")
    simulator.reset_requests()
    result = stack.up()
    assert result.summary.resource_changes == {"replace": 1, "same": 1}
    (cluster,) = live_clusters(simulator)
    assert (cluster.cluster_id != old_id, cluster.region) == (True, "us-west-2")
    calls = [r["method"] for r in simulator.requests() if r["method"] in ("POST", "DELETE")]
    assert calls == ["DELETE", "POST"]  # same name: delete before create, no duplicate


def test_values_unknown_at_preview_pass_check_and_diff(
    pulumi_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    work = pulumi_env.project(PROGRAMS / "unknowns")
    stack = pulumi_env.stack(
        work,
        config={
            "prefix": "a",
            "numGpus": "8",
            "together:apiKey": Secret(simulator.api_key),
            "together:baseUrl": simulator.base_url,
        },
    )
    assert stack.preview().change_summary == {auto.OpType.CREATE: 3}
    assert stack.up().outputs["name"].value == "a-cluster"
    # A new prefix makes the name unknown again at preview: a replacement, not an error.
    stack.set_config("prefix", auto.ConfigValue("b"))
    preview = stack.preview()
    # The name source updates; the cluster, whose name is now unknown, is a replacement.
    assert preview.change_summary == {
        auto.OpType.UPDATE: 1,
        auto.OpType.REPLACE: 1,
        auto.OpType.SAME: 1,
    }
    # Rules that need no unknown value still apply at preview.
    stack.set_config("numGpus", auto.ConfigValue("0"))
    with pytest.raises(auto.CommandError, match="leaves no standard node"):
        stack.preview()


def test_a_lost_create_answer_never_becomes_a_second_cluster(
    pulumi_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    simulator.set_faults(lost_answer_rate=1.0, lost_answer_methods=["POST"])
    stack = _stack(pulumi_env, simulator)
    result = stack.up()
    assert "the create answer was lost" in result.stdout
    (cluster,) = live_clusters(simulator)
    assert result.outputs["train_id"].value == cluster.cluster_id
    assert [r["method"] for r in simulator.requests()].count("POST") == 1
