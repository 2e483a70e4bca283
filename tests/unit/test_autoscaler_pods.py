"""`together_autoscaler.pods`: what a pod needs and what a node holds, from Kubernetes objects."""

from __future__ import annotations

from typing import Any

import pytest
from lightkube.resources.core_v1 import Node, Pod

from together_autoscaler.pods import node_state, pending_pod
from together_facts.values import TARGETED_SCALE_DOWN_ANNOTATION

CLASS = "together.ai/compute-class"
UNSCHEDULABLE = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}


def pod(spec: dict[str, Any], *, gpus: int = 8, phase: str = "Pending", **meta: Any) -> Pod:
    container = {"name": "c", "image": "i", "resources": {"limits": {"nvidia.com/gpu": str(gpus)}}}
    return Pod.from_dict({  # type: ignore[return-value]
        "metadata": {"name": "p", "namespace": "ns", "uid": "u", **meta},
        "spec": {"containers": [container], **spec},
        "status": {"phase": phase, "conditions": [UNSCHEDULABLE] if phase == "Pending" else []},
    })  # fmt: skip


def affinity(operator: str, values: list[str]) -> dict[str, Any]:
    expression = {"key": CLASS, "operator": operator, "values": values}
    terms = [{"matchExpressions": [expression]}]
    required = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}
    return {"affinity": {"nodeAffinity": required}}


@pytest.mark.parametrize(
    ("spec", "needs", "may"),
    [
        ({"nodeSelector": {CLASS: "preemptible"}}, True, True),
        (affinity("In", ["preemptible"]), True, True),
        (
            {"tolerations": [{"key": CLASS, "operator": "Equal", "value": "preemptible"}]},
            True,
            True,
        ),
        ({"tolerations": [{"key": CLASS, "operator": "Exists"}]}, True, True),
        ({}, False, True),
        (affinity("NotIn", ["preemptible"]), False, False),
        ({"nodeSelector": {CLASS: "standard"}}, False, False),
        # Tolerating the preemptible taint lets a pod run there; required affinity keeping it
        # off wins: it is no preemptible demand.
        (
            {
                "tolerations": [{"key": CLASS, "operator": "Exists"}],
                **affinity("NotIn", ["preemptible"]),
            },
            False,
            False,
        ),
    ],
)
def test_where_an_unschedulable_pod_may_run(spec: dict[str, Any], needs: bool, may: bool) -> None:
    found = pending_pod(pod(spec))
    assert found is not None
    assert (found.needs_preemptible, found.may_use_preemptible, found.gpus) == (needs, may, 8)


def test_only_pods_the_scheduler_marked_unschedulable_are_pending() -> None:
    assert pending_pod(pod({"nodeSelector": {CLASS: "preemptible"}}, phase="Running")) is None


def test_gpus_are_requests_else_limits_and_the_larger_of_containers_and_init() -> None:
    spec = {
        "containers": [
            {"name": "a", "image": "i", "resources": {"requests": {"nvidia.com/gpu": "2"}}},
            {"name": "b", "image": "i", "resources": {"limits": {"nvidia.com/gpu": "3"}}},
        ],
        "initContainers": [
            {"name": "i", "image": "i", "resources": {"limits": {"nvidia.com/gpu": "6"}}}
        ],
    }
    found = pending_pod(pod(spec))
    assert found is not None and found.gpus == 6


def node(**spec: Any) -> Node:
    return Node.from_dict({  # type: ignore[return-value]
        "metadata": {"name": "n", "labels": {CLASS: "preemptible"},
                     "annotations": {TARGETED_SCALE_DOWN_ANNOTATION: "true"}},
        "spec": spec,
        "status": {"allocatable": {"nvidia.com/gpu": "8"},
                   "conditions": [{"type": "Ready", "status": "True"}]},
    })  # fmt: skip


def test_daemonset_mirror_and_ended_pods_are_no_workload() -> None:
    daemon = pod({}, phase="Running", ownerReferences=[
        {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "d", "uid": "x"}])  # fmt: skip
    mirror = pod({}, phase="Running", annotations={"kubernetes.io/config.mirror": "x"})
    done = pod({}, phase="Succeeded")
    assert node_state(node(), [daemon, mirror, done], False).workload_pods == 0
    job = pod({}, phase="Running", gpus=4)
    state = node_state(node(), [daemon, job], False)
    assert (state.workload_pods, state.used_gpus, state.gpus, state.ready) == (1, 4, 8, True)


def test_a_node_is_marked_only_when_cordoned_and_annotated() -> None:
    assert node_state(node(unschedulable=True), [], False).marked
    assert not node_state(node(), [], False).marked
