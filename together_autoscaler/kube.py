"""The autoscaler's side of the API server: observe (Nodes, pods, reclaim Events) and act (mark a
node for targeted scale-down, record an Event), with only the calls its ClusterRole grants."""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, datetime
from typing import Final

from lightkube import ALL_NS, Client
from lightkube.models.core_v1 import EventSource, ObjectReference
from lightkube.models.meta_v1 import ObjectMeta
from lightkube.resources.core_v1 import Event, Node, Pod
from lightkube.types import PatchType

from together_autoscaler.model import Explanation, NodeState, PendingPod
from together_autoscaler.pods import node_state, pending_pod, running_workloads
from together_facts.values import (
    COMPUTE_CLASS_LABEL,
    PREEMPTIBLE,
    PREEMPTION_REASONS,
    TARGETED_SCALE_DOWN_ANNOTATION,
)

__all__ = ["COMPONENT", "KubeSide"]

COMPONENT: Final = "together-autoscaler"
NODE_EVENT_NAMESPACE: Final = "default"
"""Where Events about Nodes (cluster-scoped) live, as kubectl and the node controller use."""


class KubeSide:
    """One lightkube client; ``identity`` names this replica in the Events it records.

    Every call here is one the ClusterRole (`together_provider.kubernetes.AUTOSCALER_RULES`)
    grants, and nothing more: ``list`` Nodes (the preemptible class only, by label selector) and
    ``patch`` them (cordon and annotate, or undo that); ``list`` Pods in every namespace; ``list``
    Events in every namespace (a reclaim's ``TogetherPreemptionNotified`` on a Node) and
    ``create`` Events (the explanation of each decision). The Lease is in
    `together_autoscaler.leader`.
    """

    def __init__(self, client: Client, identity: str) -> None:
        self.client = client
        self.identity = identity

    def observe(self) -> tuple[tuple[NodeState, ...], tuple[PendingPod, ...]]:
        """The preemptible nodes (with what runs on each) and the Unschedulable pods."""
        nodes = list(self.client.list(Node, labels={COMPUTE_CLASS_LABEL: PREEMPTIBLE}))
        pods = list(self.client.list(Pod, namespace=ALL_NS))
        on_node: defaultdict[str, list[Pod]] = defaultdict(list)
        for pod in pods:
            if pod.spec is not None and pod.spec.nodeName:
                on_node[pod.spec.nodeName].append(pod)
        reclaimed = {
            event.involvedObject.name
            for event in self.client.list(
                Event, namespace=ALL_NS, fields={"involvedObject.kind": "Node"}
            )
            if event.reason in PREEMPTION_REASONS
        }
        states = tuple(
            node_state(n, on_node[name], name in reclaimed)
            for n in nodes
            if (name := (n.metadata.name if n.metadata else None) or "")
        )
        pending = tuple(p for p in map(pending_pod, pods) if p is not None)
        return states, pending

    def workload_pods(self, node: str) -> int:
        """Workload pods bound to ``node`` now: one list by field selector, for the re-check
        after a cordon (not a whole observation)."""
        pods = self.client.list(Pod, namespace=ALL_NS, fields={"spec.nodeName": node})
        return len(running_workloads(pods))

    def mark(self, node: str) -> None:
        """Cordon and annotate ``node``: Together removes it first when the target drops."""
        self._patch(node, annotation="true", unschedulable=True)

    def unmark(self, node: str) -> None:
        """Undo :meth:`mark` (the target could not be lowered)."""
        self._patch(node, annotation=None, unschedulable=None)

    def _patch(self, node: str, *, annotation: str | None, unschedulable: bool | None) -> None:
        body = {
            "metadata": {"annotations": {TARGETED_SCALE_DOWN_ANNOTATION: annotation}},
            "spec": {"unschedulable": unschedulable},
        }
        self.client.patch(Node, node, body, patch_type=PatchType.MERGE)

    def record(self, explanation: Explanation) -> None:
        """A core/v1 Event on the pod or node, so ``kubectl describe`` shows the decision."""
        now = datetime.now(UTC)
        namespace = explanation.namespace or NODE_EVENT_NAMESPACE
        event = Event(
            metadata=ObjectMeta(generateName=f"{explanation.name}.", namespace=namespace),
            involvedObject=ObjectReference(
                apiVersion="v1",
                kind=explanation.kind,
                name=explanation.name,
                namespace=explanation.namespace or None,
                uid=explanation.uid or None,
            ),
            reason=explanation.reason,
            message=explanation.message,
            type="Warning" if explanation.warning else "Normal",
            source=EventSource(component=COMPONENT),
            reportingComponent=COMPONENT,
            reportingInstance=self.identity,
            firstTimestamp=now,
            lastTimestamp=now,
            count=1,
        )
        self.client.create(event, namespace=namespace)
