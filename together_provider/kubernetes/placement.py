"""Kubernetes workloads on a Together cluster's standard or preemptible nodes: pod-spec helpers that
pin interruptible work to preemptible nodes, keep critical work off them, and check a pod against
the drain window while the program runs, so at preview. Importing this module creates nothing."""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any, Final, Protocol, runtime_checkable

import pulumi
import pulumi_kubernetes as k8s

from together_facts.errors import SpecError
from together_facts.placement import REQUIRED_AFFINITY, forbids_preemptible, requires_preemptible
from together_facts.values import COMPUTE_CLASS_LABEL, DRAIN_WINDOW_SECONDS
from together_facts.values import PREEMPTIBLE as PREEMPTIBLE_VALUE

__all__ = [
    "COMPUTE_CLASS_LABEL",
    "DRAIN_WINDOW_SECONDS",
    "GRACE_FIELD",
    "ComputeClass",
    "WorkloadCluster",
    "WorkloadSpecError",
    "check_pod_spec",
    "cluster_provider",
    "forbids_preemptible",
    "off_preemptible",
    "on_preemptible",
    "pod_template",
    "requires_preemptible",
    "warn_if_no_preemptible_target",
]

GRACE_FIELD: Final = "terminationGracePeriodSeconds"
SKIP_AWAIT: Final = "pulumi.com/skipAwait"
WAIT_FOR: Final = "pulumi.com/waitFor"
"""pulumi-kubernetes waits for this condition instead of its own await logic for the kind."""

PodSpec = dict[str, Any]
"""A plain Kubernetes-JSON dict (camelCase keys, as in a manifest): pulumi_kubernetes passes such
keys through unchanged, so what a test asserts on is what the API server receives."""


class ComputeClass(StrEnum):
    """The kind of node a pod needs: *standard* (never reclaimed) or *preemptible*."""

    STANDARD = "standard"
    PREEMPTIBLE = PREEMPTIBLE_VALUE


@runtime_checkable
class WorkloadCluster(Protocol):
    """What the Kubernetes helpers read from a cluster: the dynamic `together_provider.Cluster`
    and the native `together_provider.native.Cluster` both have all of it, so every helper takes
    either host's cluster. A host that lacks a member fails mypy where its cluster is passed
    (tests/unit/test_workload_cluster.py passes both), not silently at `pulumi up`.

    ``id`` is the Pulumi id, which both hosts set to ``cluster_id``: unlike that output, it
    stays known while a preview updates the cluster in place.

    ``has_volume`` is known when the program runs (from ``ClusterArgs.volume_id``, even while
    the volume's id is unknown), because the shape of a checkpoint claim is decided then.
    """

    @property
    def cluster_name(self) -> pulumi.Output[str]: ...
    @property
    def id(self) -> pulumi.Output[str]: ...
    @property
    def cluster_id(self) -> pulumi.Output[str]: ...
    @property
    def num_preemptible_gpus(self) -> pulumi.Output[int]: ...
    @property
    def max_preemptible_gpus(self) -> pulumi.Output[int | None]: ...
    @property
    def kube_config(self) -> pulumi.Output[str]: ...
    @property
    def volume_name(self) -> pulumi.Output[str]: ...
    @property
    def has_volume(self) -> bool: ...


class WorkloadSpecError(SpecError):
    """A workload's pod spec breaks a scheduling rule of preemptible nodes.

    Raised while the program runs, so ``pulumi preview`` fails before any resource is registered.
    """


def cluster_provider(
    resource_name: str,
    cluster: WorkloadCluster,
    *,
    render_yaml_to_directory: str | None = None,
    opts: pulumi.ResourceOptions | None = None,
) -> k8s.Provider:
    """A Kubernetes provider for ``cluster``'s API server, authenticated by its kubeconfig.

    The kubeconfig stays a secret in the state. With ``render_yaml_to_directory`` the provider
    writes manifests to that directory instead of applying them, and gets an empty kubeconfig:
    the plugin rejects a kubeconfig in render mode, and without the explicit ``""`` the Python SDK
    would send ``$KUBECONFIG`` as one. Rendering needs no cluster. The provider still depends on
    the cluster, so both modes order operations the same way.
    """
    if not isinstance(cluster, pulumi.Resource):
        raise TypeError(f"cluster_provider({resource_name!r}): {cluster!r} is not a resource")
    merged = pulumi.ResourceOptions.merge(pulumi.ResourceOptions(depends_on=[cluster]), opts)
    if render_yaml_to_directory is not None:
        return k8s.Provider(
            resource_name,
            render_yaml_to_directory=render_yaml_to_directory,
            kubeconfig="",
            opts=merged,
        )
    kubeconfig: pulumi.Output[str] = pulumi.Output.secret(cluster.kube_config)
    return k8s.Provider(resource_name, kubeconfig=kubeconfig, opts=merged)


def on_preemptible(pod_spec: Mapping[str, Any]) -> PodSpec:
    """``pod_spec`` pinned to preemptible nodes with a ``nodeSelector`` on the compute class.

    No toleration is added: Together documents a node *label*, not a taint, on preemptible nodes,
    and a toleration for an undocumented taint would be dead config that hides a future change.
    Add one in ``pod_spec`` if your cluster taints its preemptible nodes.
    """
    selector = {
        **pod_spec.get("nodeSelector", {}),
        COMPUTE_CLASS_LABEL: ComputeClass.PREEMPTIBLE.value,
    }
    return {**pod_spec, "nodeSelector": selector}


def off_preemptible(pod_spec: Mapping[str, Any]) -> PodSpec:
    """``pod_spec`` kept off preemptible nodes by required node affinity ``NotIn [preemptible]``.

    Affinity, not a ``nodeSelector``: standard nodes may carry no compute-class label at all. The
    expression is added to every existing required term, because terms are ORed and one term
    without it would let the pod onto a preemptible node.
    """
    not_preemptible = {
        "key": COMPUTE_CLASS_LABEL,
        "operator": "NotIn",
        "values": [ComputeClass.PREEMPTIBLE.value],
    }
    affinity = dict(pod_spec.get("affinity", {}))
    node_affinity = dict(affinity.get("nodeAffinity", {}))
    required = dict(node_affinity.get(REQUIRED_AFFINITY, {}))
    terms = required.get("nodeSelectorTerms") or [{}]
    required["nodeSelectorTerms"] = [
        {**term, "matchExpressions": [*term.get("matchExpressions", []), not_preemptible]}
        for term in terms
    ]
    node_affinity[REQUIRED_AFFINITY] = required
    affinity["nodeAffinity"] = node_affinity
    return {**pod_spec, "affinity": affinity}


def check_pod_spec(workload: str, pod_spec: Mapping[str, Any]) -> ComputeClass | None:
    """The compute class ``pod_spec`` requires (``None``: it may run on either), after checking it.

    Raises :class:`WorkloadSpecError` when the spec both requires and forbids preemptible nodes
    (nothing could schedule it), or when a pod that may run on a preemptible node asks for a grace
    period longer than the 300 s drain window (Together would cut it short): Together reclaims a
    preemptible node by cordoning it and sending its pods SIGTERM at T+0, removes it at T+300 s
    whatever its pods are doing, and caps ``terminationGracePeriodSeconds`` at 300 s.
    """
    requires, forbids = requires_preemptible(pod_spec), forbids_preemptible(pod_spec)
    if requires and forbids:
        raise WorkloadSpecError(
            f"workload '{workload}': {requires} requires preemptible nodes but {forbids} forbids "
            "them, so no node can run its pods",
            resource=workload,
            field="nodeSelector",
            fix="use on_preemptible() for interruptible work or off_preemptible() for critical "
            "work, not both",
        )
    grace = pod_spec.get(GRACE_FIELD)
    if not forbids and isinstance(grace, int) and grace > DRAIN_WINDOW_SECONDS:
        raise WorkloadSpecError(
            f"workload '{workload}': {GRACE_FIELD}={grace} is longer than the "
            f"{DRAIN_WINDOW_SECONDS} s drain window of a preemptible node, where its pods may run; "
            f"Together caps the grace period at {DRAIN_WINDOW_SECONDS} s and removes the node "
            "at T+300 s whatever its pods are doing",
            resource=workload,
            field=GRACE_FIELD,
            fix=f"set {GRACE_FIELD} <= {DRAIN_WINDOW_SECONDS} and checkpoint within it, or keep "
            "the workload off preemptible nodes with off_preemptible()",
        )
    if requires:
        return ComputeClass.PREEMPTIBLE
    return ComputeClass.STANDARD if forbids else None


def pod_template(
    workload: str,
    compute_class: ComputeClass,
    pod_spec: Mapping[str, Any],
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """A pod template for ``compute_class``: placed, checked, and labelled with the class it needs
    (so ``kubectl get pods -l together.ai/compute-class=preemptible`` lists what a reclaim hits).

    ``annotations`` go on every pod (for instance ``together-sim/run-seconds``, how long the
    simulator lets a pod run before it succeeds)."""
    place = on_preemptible if compute_class is ComputeClass.PREEMPTIBLE else off_preemptible
    spec = place(pod_spec)
    check_pod_spec(workload, spec)
    metadata: dict[str, Any] = {
        "labels": {**(labels or {}), COMPUTE_CLASS_LABEL: compute_class.value}
    }
    if annotations:
        metadata["annotations"] = dict(annotations)
    return {"metadata": metadata, "spec": spec}


def warn_if_no_preemptible_target(
    workload: str, cluster: WorkloadCluster, resource: pulumi.Resource | None = None
) -> None:
    """Warn (at preview too) when a preemptible workload targets a cluster whose preemptible
    target is 0: its pods would stay Pending, which Kubernetes reports only as a scheduling event.
    """

    def warn(args: list[Any]) -> None:
        name, target = args
        if target == 0:
            pulumi.log.warn(
                f"workload '{workload}' needs preemptible nodes but cluster '{name}' has a "
                "preemptible target of 0 (num_preemptible_gpus=0), so none of its pods would "
                "schedule; raise num_preemptible_gpus or run the workload on standard nodes",
                resource=resource,
            )

    pulumi.Output.all(cluster.cluster_name, cluster.num_preemptible_gpus).apply(warn)
