"""The Cluster resource through the real Pulumi engine against the simulator, on both hosts
(`host` fixture: dynamic, native). One behaviour per test, except a cluster's life from create to
destroy, whose steps share one stack (each step is a behaviour; one stack keeps the suite fast).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import together
from pulumi import automation as auto

from testkit.pulumi_env import PulumiEnv, provider_config
from testkit.sim import SimulatorProcess
from tests.clusters import fails, live_clusters, preview_error, set_clusters, together_client
from tests.hosts import Host
from tests.integration.conftest import PROGRAMS
from tests.specs import CLUSTER_SPEC as BASE
from together_api.kubeconfig import decode_kube_config
from together_api.wire import ClusterCreateRequest

API_KEY = "sk-test-key-5f1e9c3a7b"
FAST = {"time_scale": 600, "api_key": API_KEY}  # 6 simulated minutes of provisioning = 0.6 s
pytestmark = [pytest.mark.engine, pytest.mark.parametrize("simulator", [FAST], indirect=True)]
ONE_CLUSTER = "/v1/compute/clusters/{cluster_id}"


def _stack(host: Host, env: PulumiEnv, sim: SimulatorProcess, **spec: Any) -> auto.Stack:
    """A stack declaring one cluster, `train`: the baseline spec with `spec` on top."""
    return host.cluster_stack(env, sim, {"train": {**BASE, **spec}})


def _set_spec(stack: auto.Stack, **spec: Any) -> None:
    set_clusters(stack, {"train": {**BASE, **spec}})


def _stored(host: Host, env: PulumiEnv) -> dict[str, Any]:
    (outputs,) = host.stored_clusters(env)
    return outputs


def test_create_update_in_place_refuse_a_conversion_then_destroy(
    host: Host, env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    """One cluster's life, step by step on one stack: each step is a behaviour of its own."""
    # Created with a preemptible target.
    stack = _stack(host, env, simulator, num_preemptible_gpus=16)
    outputs = stack.up().outputs
    assert outputs["train_status"].value == "Ready"
    assert outputs["train_desired"].value == 16
    assert outputs["train_int_counts"].value == "int"  # the declared type casts the engine's 8.0
    (cluster,) = live_clusters(simulator)
    first_id = outputs["train_id"].value
    assert cluster.cluster_id == first_id
    assert (cluster.num_gpus, cluster.desired_preemptible_gpus) == (8, 16)

    # A target change previews as one in-place update and applies with exactly one PUT.
    _set_spec(stack, num_preemptible_gpus=24)
    simulator.reset_requests()
    assert stack.preview().change_summary == {auto.OpType.UPDATE: 1, auto.OpType.SAME: 1}
    assert simulator.requests() == []  # preview is check + diff only: no API call
    result = stack.up()
    assert result.summary.resource_changes == {"update": 1, "same": 1}
    assert [(r["method"], r["status"]) for r in simulator.requests()] == [("PUT", 200)]
    assert result.outputs["train_id"].value == first_id
    assert result.outputs["train_desired"].value == 24
    # The kubeconfig and status survive the update: no wiped outputs.
    assert result.outputs["train_status"].value == "Ready"
    assert result.outputs["train_kube_config"].value

    # A standard count change PUTs num_gpus, then waits for Ready (GETs after the PUT) before the
    # update is reported done, so the next resource never sees a cluster still scaling.
    _set_spec(stack, num_gpus=16, num_preemptible_gpus=24)
    simulator.reset_requests()
    result = stack.up()
    assert result.summary.resource_changes == {"update": 1, "same": 1}
    calls = [(r["method"], r["path"]) for r in simulator.requests()]
    assert calls[0] == ("PUT", ONE_CLUSTER)
    assert calls[1:] and all(call == ("GET", ONE_CLUSTER) for call in calls[1:])
    assert result.outputs["train_id"].value == first_id
    assert result.outputs["train_status"].value == "Ready"
    (cluster,) = live_clusters(simulator)
    assert cluster.num_gpus == 16

    # Converting standard nodes to preemptible ones fails at preview, with no API call.
    _set_spec(stack, num_gpus=8, num_preemptible_gpus=32)
    simulator.reset_requests()
    error = preview_error(stack)
    assert "num_gpus" in error
    assert "converts standard nodes to preemptible" in error
    assert simulator.requests() == []

    # Back to what was applied: nothing to do.
    _set_spec(stack, num_gpus=16, num_preemptible_gpus=24)
    assert stack.preview(expect_no_changes=True).change_summary == {auto.OpType.SAME: 2}

    # Destroy removes the cluster.
    stack.destroy()
    with together_client(simulator) as client:
        assert client.list_clusters() == []


def test_zero_standard_spec_fails_at_preview_without_api_calls(
    host: Host, env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    stack = _stack(host, env, simulator, num_gpus=0, num_preemptible_gpus=16)
    error = preview_error(stack)
    assert "num_gpus=0 leaves no standard node" in error
    assert "num_gpus >= 8" in error
    assert "Traceback" not in error
    assert simulator.requests() == []


def test_region_change_replaces_deleting_the_old_cluster_first(
    host: Host, env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    stack = _stack(host, env, simulator)
    old_id = stack.up().outputs["train_id"].value
    _set_spec(stack, region="us-west-2")
    assert stack.preview().change_summary == {auto.OpType.REPLACE: 1, auto.OpType.SAME: 1}
    simulator.reset_requests()
    result = stack.up()
    assert result.summary.resource_changes == {"replace": 1, "same": 1}
    (cluster,) = live_clusters(simulator)
    assert (cluster.cluster_id != old_id, cluster.region) == (True, "us-west-2")
    calls = [r["method"] for r in simulator.requests() if r["method"] in ("POST", "DELETE")]
    assert calls == ["DELETE", "POST"]  # same name: delete before create, no duplicate


def test_refresh_after_a_reclaim_shows_no_drift(
    host: Host, env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    stack = _stack(host, env, simulator, num_preemptible_gpus=16)
    cluster_id = stack.up().outputs["train_id"].value
    simulator.advance(600)  # let the preemptible target fill
    assert simulator.reclaim(cluster_id, nodes=1)
    assert stack.refresh().summary.resource_changes == {"same": 2}
    events = _stored(host, env)["preemption_events"]
    assert [e["reason"] for e in events] == ["TogetherPreemptionNotified"]
    assert stack.preview().change_summary == {auto.OpType.SAME: 2}


def test_refresh_shows_a_target_changed_elsewhere_as_drift_and_drops_a_deleted_cluster(
    host: Host, env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    stack = _stack(host, env, simulator, num_preemptible_gpus=16)
    cluster_id = stack.up().outputs["train_id"].value
    sdk = together.Together(api_key=simulator.api_key, base_url=simulator.root_url)
    sdk.clusters.update(cluster_id, num_preemptible_gpus=32)
    refresh = stack.refresh()
    assert refresh.summary.resource_changes == {"update": 1, "same": 1}
    stored = _stored(host, env)
    assert (stored["desired_preemptible_gpus"], stored["num_preemptible_gpus"]) == (32, 32)
    # The program still declares 16: the next preview puts it back, in place.
    assert stack.preview().change_summary == {auto.OpType.UPDATE: 1, auto.OpType.SAME: 1}

    # Deleted elsewhere: refresh drops it from the state, and the next preview creates it anew.
    with together_client(simulator) as client:
        client.delete_cluster(cluster_id)
    simulator.advance(600)
    assert stack.refresh().summary.resource_changes == {"delete": 1, "same": 1}
    assert host.stored_clusters(env) == []
    assert stack.preview().change_summary == {auto.OpType.CREATE: 1, auto.OpType.SAME: 1}


def test_failed_provisioning_leaves_no_cluster(
    host: Host, env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    simulator.set_faults(fail_provisioning=True)
    stack = _stack(host, env, simulator)
    error = fails(stack.up)
    assert "provisioning" in error
    assert "was deleted so nothing is left billing" in error
    # Our sentence alone, on either host: no Python traceback, no source location.
    assert "Traceback" not in error
    assert ".py" not in error
    with together_client(simulator) as client:
        assert client.list_clusters() == []
    assert [r for r in simulator.requests() if r["method"] == "POST"] != []


def test_state_holds_neither_the_api_key_nor_the_kubeconfig_in_plain_text(
    host: Host, env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    stack = _stack(host, env, simulator, num_preemptible_gpus=8)
    cluster_id = stack.up().outputs["train_id"].value
    with together_client(simulator) as client:
        wire_value = client.get_cluster(cluster_id).kube_config
    kube_config = decode_kube_config(wire_value)  # Together sends base64; the output is YAML
    assert kube_config and kube_config != wire_value
    state = json.dumps(env.exported_state(host.cluster_work(env)))
    assert API_KEY not in state
    assert wire_value not in state
    assert kube_config not in state
    assert json.dumps(kube_config)[1:-1] not in state  # as the JSON state would hold it
    for line in kube_config.splitlines():
        if "token" in line:
            assert line not in state
            assert line.split(":", 1)[1].strip() not in state
    # The secret is there, encrypted: the output itself is still readable through Pulumi.
    assert stack.outputs()["train_kube_config"].value == kube_config


def test_duplicate_name_is_refused_naming_the_fix_which_then_adopts_the_cluster(
    host: Host, env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    with together_client(simulator) as client:
        existing = client.create_cluster(
            ClusterCreateRequest.model_validate(
                {**BASE, "cluster_name": "train", "billing_type": "ON_DEMAND"}
            )
        )
    simulator.advance(600)
    stack = _stack(host, env, simulator, num_preemptible_gpus=8)
    refused = fails(stack.up)
    assert "already exists" in refused
    assert f"adopt_cluster_id={existing.cluster_id!r}" in refused
    assert [c.cluster_id for c in live_clusters(simulator)] == [existing.cluster_id]
    # The fix the error names: take the cluster over.
    _set_spec(stack, num_preemptible_gpus=8, adopt_cluster_id=existing.cluster_id)
    outputs = stack.up().outputs
    assert outputs["train_id"].value == existing.cluster_id
    assert outputs["train_desired"].value == 8  # the in-place difference was applied
    assert [c.cluster_id for c in live_clusters(simulator)] == [existing.cluster_id]


def test_a_lost_create_answer_never_becomes_a_second_cluster(
    host: Host, env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    simulator.set_faults(lost_answer_rate=1.0, lost_answer_methods=["POST"])
    result = _stack(host, env, simulator).up()
    assert "the create answer was lost" in result.stdout
    (cluster,) = live_clusters(simulator)
    assert result.outputs["train_id"].value == cluster.cluster_id
    assert [r["method"] for r in simulator.requests()].count("POST") == 1


def test_values_unknown_at_preview_pass_check_and_diff(
    host: Host, env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    work = env.project(PROGRAMS / "unknowns")
    stack = env.stack(
        work,
        config={
            "host": host.name,
            "prefix": "a",
            "numGpus": "8",
            **provider_config(simulator),
        },
    )
    assert stack.preview().change_summary == {auto.OpType.CREATE: 3}
    assert stack.up().outputs["name"].value == "a-cluster"
    assert len(host.stored_clusters(env, work)) == 1  # declared on this host
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
