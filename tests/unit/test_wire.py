"""Wire models: strict requests, lenient responses, both error shapes."""

from __future__ import annotations

import pydantic
import pytest

from together_api.wire import (
    Cluster,
    ClusterCreateRequest,
    ClusterStatus,
    ClusterUpdateRequest,
    ErrorBody,
    GpuWorkerNode,
    NodeLifecycleEvent,
)
from together_facts import values

CREATE = {
    "cluster_name": "train",
    "region": "us-central-8",
    "gpu_type": "H100_SXM",
    "num_gpus": 8,
    "billing_type": "ON_DEMAND",
}


def test_constants() -> None:
    assert values.DEFAULT_BASE_URL == "https://api.together.ai/v1"
    assert (values.GPUS_PER_NODE, values.DRAIN_WINDOW_SECONDS) == (8, 300)
    assert values.PREEMPTION_REASONS == ("TogetherPreemptionNotified", "TogetherPreempted")
    assert values.BILLING_TYPES == ("RESERVED", "ON_DEMAND", "SCHEDULED_CAPACITY")
    assert values.CLUSTER_TYPES == ("KUBERNETES", "SLURM")


def test_create_request_rejects_unknown_fields_and_enum_values() -> None:
    with pytest.raises(pydantic.ValidationError):
        ClusterCreateRequest.model_validate({**CREATE, "name": "typo"})
    with pytest.raises(pydantic.ValidationError):
        ClusterCreateRequest.model_validate({**CREATE, "gpu_type": "H100-SXM"})
    with pytest.raises(pydantic.ValidationError):
        ClusterCreateRequest.model_validate({**CREATE, "billing_type": "prepaid"})


def test_create_request_sends_only_what_was_set() -> None:
    request = ClusterCreateRequest.model_validate({**CREATE, "num_preemptible_gpus": 16})
    assert request.to_json() == {**CREATE, "num_preemptible_gpus": 16}


def test_update_request_omits_everything_not_set() -> None:
    assert ClusterUpdateRequest().to_json() == {}
    assert ClusterUpdateRequest(num_preemptible_gpus=0).to_json() == {"num_preemptible_gpus": 0}
    assert ClusterUpdateRequest(num_gpus=None, num_preemptible_gpus=8).to_json() == {
        "num_preemptible_gpus": 8
    }
    with pytest.raises(pydantic.ValidationError):
        ClusterUpdateRequest.model_validate({"cluster_name": "immutable"})


def test_cluster_tolerates_new_fields_statuses_and_gpu_types() -> None:
    cluster = Cluster.model_validate(
        {
            "cluster_id": "c-1",
            "status": "Hibernating",
            "gpu_type": "Z900_SXM",
            "brand_new_field": {"x": 1},
            "gpu_worker_nodes": [{"node_id": "gpu-preemptible-dp-a", "future": True}],
        }
    )
    assert cluster.status == "Hibernating"
    assert not cluster.is_ready and not cluster.is_failed and not cluster.is_deleting
    assert cluster.model_extra == {"brand_new_field": {"x": 1}}
    assert cluster.gpu_worker_nodes[0].is_preemptible


def test_cluster_helpers() -> None:
    failed = Cluster.model_validate(
        {
            "cluster_id": "c",
            "status": ClusterStatus.RUNNING_ACCEPTANCE_TESTS,
            "phase_transitions": [
                {
                    "phase": "CLUSTER_PHASE_RUNNING_ACCEPTANCE_TESTS",
                    "transition_time": "2026-01-01T00:00:00Z",
                },
                {
                    "phase": "CLUSTER_PHASE_ACCEPTANCE_TESTS_FAILED",
                    "transition_time": "2026-01-01T00:01:00Z",
                },
            ],
        }
    )
    assert failed.is_failed and failed.latest_phase == "CLUSTER_PHASE_ACCEPTANCE_TESTS_FAILED"
    assert Cluster(cluster_id="c", status="Ready").is_ready
    assert Cluster(cluster_id="c", status="Deleting").is_deleting
    assert not GpuWorkerNode(node_id="gpu-dp-abc-001").is_preemptible


@pytest.mark.parametrize("reason", ["TogetherPreemptionNotified", "TogetherPreempted"])
def test_both_preemption_reasons_count(reason: str) -> None:
    event = NodeLifecycleEvent(node_id="n", reason=reason, timestamp="2026-01-01T00:00:00Z")
    assert event.is_preemption
    other = NodeLifecycleEvent(
        node_id="n", reason="TogetherScaledUp", timestamp="2026-01-01T00:00:00Z"
    )
    assert not other.is_preemption


def test_error_body_accepts_both_shapes() -> None:
    openai = ErrorBody.model_validate({"error": {"message": "bad", "type": "x", "param": "region"}})
    assert (openai.text, openai.param) == ("bad", "region")
    grpc = ErrorBody.model_validate({"code": 9, "message": "Out of stock"})
    assert (grpc.text, grpc.param) == ("Out of stock", None)


@pytest.mark.parametrize("reason", values.LIFECYCLE_REASONS)
def test_every_documented_lifecycle_reason_parses_and_only_reclaims_are_preemptions(
    reason: str,
) -> None:
    event = NodeLifecycleEvent(node_id="n", reason=reason, timestamp="2026-01-01T00:00:00Z")
    assert event.reason == reason
    assert event.is_preemption == (reason in ("TogetherPreemptionNotified", "TogetherPreempted"))


def test_node_name_marks_a_preemptible_node() -> None:
    node = GpuWorkerNode(node_id="i-1", host_name="10.0.0.1", node_name="gpu-preemptible-dp-a-b")
    assert node.is_preemptible
    assert not GpuWorkerNode(node_id="i-2", node_name="gpu-dp-a-b").is_preemptible
