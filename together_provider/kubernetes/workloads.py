"""Components for Together workloads (a checkpointing job array, serving replicas), built on the
placement rules of `placement.py`, so their pods are placed and checked against
the drain window at preview like any other. Importing this module creates nothing."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from together_provider.kubernetes.placement import (
    DRAIN_WINDOW_SECONDS,
    GRACE_FIELD,
    SKIP_AWAIT,
    WAIT_FOR,
    ComputeClass,
    WorkloadCluster,
    pod_template,
    warn_if_no_preemptible_target,
)
from together_worker import job

__all__ = [
    "CheckpointingWorker",
    "CheckpointingWorkerArgs",
    "ServingReplicas",
    "ServingReplicasArgs",
]


@dataclass
class CheckpointingWorkerArgs:
    """A job array whose pods checkpoint to a shared volume and are requeued after a reclaim.

    On a cluster declared with a shared volume (`ClusterArgs(volume_id=...)`) the checkpoint
    claim binds to that volume's PersistentVolume, so checkpoints land on the volume and outlive
    the cluster's nodes; otherwise a claim of ``checkpoint_size`` is provisioned from
    ``checkpoint_storage_class``, or ``checkpoint_claim_name`` names an existing one.

    Each pod gets ``CHECKPOINT_DIR`` (resume from ``$CHECKPOINT_DIR/$JOB_COMPLETION_INDEX``) and
    ``DRAIN_WINDOW_SECONDS``: on SIGTERM it has that long to write a checkpoint and exit.
    ``pre_stop_command`` runs before SIGTERM and shares the same window.

    **What your code must do on SIGTERM**: write the checkpoint, then exit with a NON-ZERO status
    (re-raise the signal, or ``sys.exit(143)``, what a process stopped by SIGTERM reports). A pod
    that exits 0 ends ``Succeeded``, and the Job counts its index as completed although the work
    was cut short: nothing runs it again. A non-zero exit makes the pod ``Failed``; because a
    reclaim marks the pod ``DisruptionTarget``, the pod failure policy ignores that failure and
    the Job starts the index again, which resumes from its checkpoint.

    ``pod_annotations`` go on every pod; the local simulator reads ``together-sim/run-seconds``
    (how many simulated seconds a pod runs before it succeeds) from there.
    """

    image: pulumi.Input[str]
    command: Sequence[pulumi.Input[str]]
    completions: int
    parallelism: int
    cluster: WorkloadCluster
    compute_class: ComputeClass = ComputeClass.PREEMPTIBLE
    resources: Mapping[str, Any] | None = None
    env: Mapping[str, pulumi.Input[str]] = field(default_factory=dict)
    backoff_limit: int = 3
    drain_seconds: int = DRAIN_WINDOW_SECONDS
    checkpoint_mount_path: str = "/checkpoints"
    checkpoint_claim_name: str | None = None
    checkpoint_size: str = "100Gi"
    checkpoint_storage_class: str | None = None
    pre_stop_command: Sequence[str] | None = None
    wait_for_completion: bool = False
    namespace: str | None = None
    pod_annotations: Mapping[str, str] = field(default_factory=dict)


class CheckpointingWorker(pulumi.ComponentResource):
    """An Indexed Job (plus its checkpoint claim) whose reclaimed pods do not count as failures.

    ``podFailurePolicy`` ignores pods with the ``DisruptionTarget`` condition (evicted by a drain
    or removed with their node), so a reclaim requeues the index instead of using up
    ``backoffLimit``; real crashes still count. ``podReplacementPolicy: Failed`` starts the
    replacement only after the old pod has finished writing its checkpoint (two pods never write
    one index's checkpoint). Unless ``wait_for_completion``, ``pulumi up`` does not wait for the
    Job to finish.

    The requeue only works if a reclaimed pod ends ``Failed``: its code must exit non-zero after
    writing the checkpoint on SIGTERM (see :class:`CheckpointingWorkerArgs`). An index whose pod
    exits 0 on SIGTERM is counted as completed and never runs again.
    """

    job: k8s.batch.v1.Job
    checkpoint_claim: k8s.core.v1.PersistentVolumeClaim | None

    def __init__(
        self, name: str, args: CheckpointingWorkerArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("together:kubernetes:CheckpointingWorker", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        labels = {"app.kubernetes.io/name": name, "app.kubernetes.io/component": "worker"}
        claim_name = args.checkpoint_claim_name or f"{name}-checkpoints"
        self.checkpoint_claim = None
        if args.checkpoint_claim_name is None:
            claim_spec: dict[str, Any] = {
                "accessModes": ["ReadWriteMany"],  # every index of the array shares it
                "resources": {"requests": {"storage": args.checkpoint_size}},
            }
            claim_annotations: dict[str, str] = {}
            if args.cluster.has_volume:
                # Together exposes the cluster's shared volume as a static ReadWriteMany
                # PersistentVolume named after the volume: bind to it, provision nothing.
                claim_spec["storageClassName"] = ""
                claim_spec["volumeName"] = args.cluster.volume_name
                # Wait for the binding itself: pulumi-kubernetes' own wait for a claim looks up
                # its storage class first and warns `no storage class found` for one with none.
                claim_annotations[WAIT_FOR] = "jsonpath={.status.phase}=Bound"
            elif args.checkpoint_storage_class:
                claim_spec["storageClassName"] = args.checkpoint_storage_class
            self.checkpoint_claim = k8s.core.v1.PersistentVolumeClaim(
                f"{name}-checkpoints",
                metadata=_metadata(claim_name, args.namespace, labels, claim_annotations),
                spec=claim_spec,
                opts=child,
            )
        container = job.worker_container(
            args.image,
            args.command,
            mount_path=args.checkpoint_mount_path,
            drain_seconds=args.drain_seconds,
            compute_class=args.compute_class.value,
            env=args.env,
            resources=args.resources,
            pre_stop_command=args.pre_stop_command,
        )
        pod_spec = job.worker_pod_spec(
            container, drain_seconds=args.drain_seconds, claim_name=claim_name
        )
        template = pod_template(name, args.compute_class, pod_spec, labels, args.pod_annotations)
        if args.compute_class is ComputeClass.PREEMPTIBLE:
            warn_if_no_preemptible_target(name, args.cluster, self)
        annotations = {} if args.wait_for_completion else {SKIP_AWAIT: "true"}
        self.job = k8s.batch.v1.Job(
            name,
            metadata=_metadata(name, args.namespace, labels, annotations),
            spec=job.indexed_job_spec(
                template,
                completions=args.completions,
                parallelism=args.parallelism,
                backoff_limit=args.backoff_limit,
            ),
            opts=pulumi.ResourceOptions(parent=self, depends_on=_present(self.checkpoint_claim)),
        )
        self.register_outputs({"job_name": self.job.metadata.name})


@dataclass
class ServingReplicasArgs:
    """Serving replicas of one model server on one compute class.

    ``app`` is the label a Service selects on; give standard and burst replicas the same ``app``
    so one Service spreads traffic over both. ``pod_annotations`` go on every replica's pod.

    On a preemptible node a replica gets SIGTERM when Together reclaims the node: stop taking
    new requests, finish in-flight ones within ``grace_seconds`` (at most 300), and exit. The
    Deployment replaces it on another node that fits.
    """

    image: pulumi.Input[str]
    replicas: int
    compute_class: ComputeClass
    cluster: WorkloadCluster
    app: str | None = None
    port: int = 8000
    args: Sequence[pulumi.Input[str]] = ()
    env: Mapping[str, pulumi.Input[str]] = field(default_factory=dict)
    resources: Mapping[str, Any] | None = None
    grace_seconds: int = 30
    namespace: str | None = None
    pod_annotations: Mapping[str, str] = field(default_factory=dict)


class ServingReplicas(pulumi.ComponentResource):
    """A Deployment of serving replicas, with a PodDisruptionBudget on standard nodes only.

    On standard nodes the budget keeps all but one replica up through voluntary disruptions (node
    upgrades, drains). Preemptible replicas get none: a reclaim removes the node at T+300 s
    whatever the budget says, so a budget there would only stall the drain and eat the window.

    ``pulumi up`` waits for standard replicas to be available (a broken image fails the update),
    but not for preemptible ones: Together fills the preemptible target asynchronously and may
    leave it below target when capacity is scarce, so waiting could time out on capacity that
    was never allocated (``pulumi.com/skipAwait``).
    """

    deployment: k8s.apps.v1.Deployment
    disruption_budget: k8s.policy.v1.PodDisruptionBudget | None

    def __init__(
        self, name: str, args: ServingReplicasArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("together:kubernetes:ServingReplicas", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        app = args.app or name
        selector = {"app.kubernetes.io/name": app, "app.kubernetes.io/instance": name}
        labels = {**selector, "app.kubernetes.io/component": "server"}
        container: dict[str, Any] = {
            "name": "server",
            "image": args.image,
            "args": list(args.args),
            "env": _env(
                {**args.env, "TOGETHER_COMPUTE_CLASS": args.compute_class.value},
            ),
            "ports": [{"name": "http", "containerPort": args.port}],
        }
        if args.resources:
            container["resources"] = dict(args.resources)
        template = pod_template(
            name,
            args.compute_class,
            {GRACE_FIELD: args.grace_seconds, "containers": [container]},
            labels,
            args.pod_annotations,
        )
        if args.compute_class is ComputeClass.PREEMPTIBLE:
            warn_if_no_preemptible_target(name, args.cluster, self)
        preemptible = args.compute_class is ComputeClass.PREEMPTIBLE
        self.deployment = k8s.apps.v1.Deployment(
            name,
            metadata=_metadata(
                name, args.namespace, labels, {SKIP_AWAIT: "true"} if preemptible else None
            ),
            spec={
                "replicas": args.replicas,
                "selector": {"matchLabels": selector},
                "template": template,
            },
            opts=child,
        )
        self.disruption_budget = None
        if args.compute_class is ComputeClass.STANDARD and args.replicas >= 2:
            self.disruption_budget = k8s.policy.v1.PodDisruptionBudget(
                name,
                metadata=_metadata(name, args.namespace, labels),
                spec={"maxUnavailable": 1, "selector": {"matchLabels": selector}},
                opts=child,
            )
        self.register_outputs({"deployment_name": self.deployment.metadata.name})


def _present(resource: pulumi.Resource | None) -> list[pulumi.Resource]:
    return [resource] if resource is not None else []


def _env(values: Mapping[str, pulumi.Input[str]]) -> list[dict[str, Any]]:
    return [{"name": key, "value": value} for key, value in values.items()]


def _metadata(
    name: str,
    namespace: str | None,
    labels: Mapping[str, str],
    annotations: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Explicit names, so a Service or a reader of rendered YAML can rely on them."""
    metadata: dict[str, Any] = {"name": name, "labels": dict(labels)}
    if namespace:
        metadata["namespace"] = namespace
    if annotations:
        metadata["annotations"] = dict(annotations)
    return metadata
