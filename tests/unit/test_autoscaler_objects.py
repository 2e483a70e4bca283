"""`together_autoscaler.pods` read field by field: every field of the `PendingPod` and the
`NodeState` it builds, from whole objects and from objects with parts missing (what `decide` is
given: a wrong field here is a wrong scale-up or scale-down there)."""

from __future__ import annotations

from typing import Any

import pytest
from lightkube.resources.core_v1 import Node, Pod

from together_autoscaler.model import NodeState, PendingPod
from together_autoscaler.pods import node_state, pending_pod, pod_gpus, running_workloads
from together_facts.values import GPUS_PER_NODE

UNSCHEDULABLE = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}


def _container(name: str = "c", **resources: dict[str, str]) -> dict[str, Any]:
    found: dict[str, Any] = {"name": name, "image": "i"}
    if resources:
        found["resources"] = resources
    return found


def _pod(
    *,
    meta: dict[str, Any] | None = None,
    containers: list[dict[str, Any]] | None = None,
    phase: str = "Pending",
    conditions: list[dict[str, Any]] | None = None,
    **spec: Any,
) -> Pod:
    body: dict[str, Any] = {
        "spec": {"containers": containers or [_container(limits={"nvidia.com/gpu": "8"})], **spec},
        "status": {
            "phase": phase,
            "conditions": [UNSCHEDULABLE] if conditions is None else conditions,
        },
    }
    if meta is not None:
        body["metadata"] = meta
    return Pod.from_dict(body)  # type: ignore[return-value]


def test_a_pending_pod_is_every_field_of_its_object() -> None:
    found = pending_pod(_pod(meta={"name": "p", "namespace": "ns", "uid": "u"}))
    assert found == PendingPod("ns", "p", "u", 8, needs_preemptible=False, may_use_preemptible=True)


def test_a_pending_pod_without_namespace_name_or_uid_gets_the_defaults() -> None:
    found = pending_pod(_pod(meta={}))
    assert found == PendingPod("default", "", "", 8, False, True)


@pytest.mark.parametrize(
    "conditions",
    [
        [{**UNSCHEDULABLE, "status": "True"}],
        [{**UNSCHEDULABLE, "type": "Ready"}],
        [{**UNSCHEDULABLE, "reason": "SchedulerError"}],
        [],
    ],
    ids=["scheduled", "another-type", "another-reason", "no-condition"],
)
def test_only_the_unschedulable_condition_makes_demand(conditions: list[dict[str, Any]]) -> None:
    assert pending_pod(_pod(meta={"name": "p"}, conditions=conditions)) is None


def test_a_pod_bound_to_a_node_or_not_pending_or_without_status_is_no_demand() -> None:
    assert pending_pod(_pod(meta={"name": "p"}, nodeName="n")) is None
    assert pending_pod(_pod(meta={"name": "p"}, phase="Running")) is None
    no_status = Pod.from_dict({"metadata": {"name": "p"}, "spec": {"containers": []}})
    assert pending_pod(no_status) is None  # type: ignore[arg-type]


def test_a_pod_without_metadata_or_spec_is_no_demand() -> None:
    status = {"phase": "Pending", "conditions": [UNSCHEDULABLE]}
    assert pending_pod(Pod.from_dict({"metadata": {"name": "p"}, "status": status})) is None  # type: ignore[arg-type]
    assert pending_pod(_pod()) is None


@pytest.mark.parametrize(
    ("containers", "init", "gpus"),
    [
        ([_container()], [], 0),  # no resources at all
        ([_container(requests={"cpu": "1"})], [], 0),  # resources, no GPU
        ([_container(requests={"nvidia.com/gpu": "2"}, limits={"nvidia.com/gpu": "4"})], [], 2),
        ([_container(limits={"nvidia.com/gpu": "3"})], [_container("i")], 3),
        ([_container()], [_container("i", limits={"nvidia.com/gpu": "1"})], 1),
        ([_container(limits={"nvidia.com/gpu": "many"})], [], 0),  # not a count: none
    ],
    ids=["no-resources", "no-gpu", "requests-first", "init-without-gpus", "init-larger", "bad"],
)
def test_gpus_a_pod_requests(
    containers: list[dict[str, Any]], init: list[dict[str, Any]], gpus: int
) -> None:
    pod = _pod(meta={"name": "p"}, containers=containers, initContainers=init)
    assert pod.spec is not None and pod_gpus(pod.spec) == gpus


def _node(body: dict[str, Any]) -> Node:
    return Node.from_dict(body)  # type: ignore[return-value]


def test_a_node_is_every_field_of_its_object() -> None:
    node = _node(
        {
            "metadata": {"name": "gpu-1"},
            "spec": {"unschedulable": True},
            "status": {
                "allocatable": {"nvidia.com/gpu": "4"},
                "conditions": [{"type": "Ready", "status": "True"}],
            },
        }
    )
    running = _pod(
        meta={"name": "w"}, phase="Running", containers=[_container(limits={"nvidia.com/gpu": "2"})]
    )
    assert node_state(node, [running], True) == NodeState(
        name="gpu-1",
        gpus=4,
        ready=True,
        cordoned=True,
        marked=False,  # cordoned, but not annotated by us
        reclaimed=True,
        used_gpus=2,
        workload_pods=1,
    )
    assert node_state(node, [], False).reclaimed is False


def test_a_node_with_nothing_but_a_name_reads_as_not_ready_with_8_gpus() -> None:
    assert node_state(_node({"metadata": {"name": "n"}}), [], False) == NodeState(
        name="n", gpus=GPUS_PER_NODE, ready=False
    )
    assert node_state(_node({}), [], False) == NodeState(name="", gpus=GPUS_PER_NODE, ready=False)


@pytest.mark.parametrize(
    "conditions",
    [
        [{"type": "Ready", "status": "False"}],
        [{"type": "MemoryPressure", "status": "True"}],
    ],
)
def test_a_node_is_ready_only_by_its_ready_condition(conditions: list[dict[str, Any]]) -> None:
    node = _node({"metadata": {"name": "n"}, "status": {"conditions": conditions}})
    assert node_state(node, [], False).ready is False


def test_failed_pods_and_pods_without_metadata_are_judged_as_workload_or_not() -> None:
    failed = _pod(meta={"name": "f"}, phase="Failed")
    anonymous = _pod(phase="Running")
    assert running_workloads([failed, anonymous]) == [anonymous]
