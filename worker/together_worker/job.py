"""The Indexed Job a worker runs in, as plain Kubernetes JSON: the cluster's half of the contract.
CheckpointingWorker and the drill both build their Job here, so the two cannot drift apart."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from together_worker.checkpoints import CHECKPOINT_DIR_ENV
from together_worker.reclaim import DRAIN_WINDOW_ENV
from together_worker.worker import POD_NAME_ENV

COMPUTE_CLASS_LABEL: Final = "together.ai/compute-class"
"""The node label Together puts on preemptible nodes (together_facts.values has the same)."""
PREEMPTIBLE: Final = "preemptible"
CHECKPOINT_VOLUME: Final = "checkpoints"
COMPUTE_CLASS_ENV: Final = "TOGETHER_COMPUTE_CLASS"

Obj = dict[str, Any]


def worker_container(
    image: Any,
    command: Sequence[Any],
    *,
    mount_path: str,
    drain_seconds: int,
    compute_class: str,
    env: Mapping[str, Any] | None = None,
    resources: Mapping[str, Any] | None = None,
    pre_stop_command: Sequence[str] | None = None,
) -> Obj:
    """The worker's container: ``CHECKPOINT_DIR`` (the claim's mount), ``DRAIN_WINDOW_SECONDS``
    (its grace period) and ``TOGETHER_COMPUTE_CLASS`` set, after the caller's own ``env``, and
    ``POD_NAME`` (the pod's own name, which together_worker's status file records).
    Values may be Pulumi Inputs: nothing here looks inside them."""
    variables = {
        **(env or {}),
        CHECKPOINT_DIR_ENV: mount_path,
        DRAIN_WINDOW_ENV: str(drain_seconds),
        COMPUTE_CLASS_ENV: compute_class,
    }
    container: Obj = {
        "name": "worker",
        "image": image,
        "command": list(command),
        "env": [
            *({"name": key, "value": value} for key, value in variables.items()),
            {"name": POD_NAME_ENV, "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
        ],
        "volumeMounts": [{"name": CHECKPOINT_VOLUME, "mountPath": mount_path}],
    }
    if resources:
        container["resources"] = dict(resources)
    if pre_stop_command:
        container["lifecycle"] = {"preStop": {"exec": {"command": list(pre_stop_command)}}}
    return container


def worker_pod_spec(container: Obj, *, drain_seconds: int, claim_name: str) -> Obj:
    """The pod spec, before placement: ``restartPolicy: Never`` (the pod failure policy needs
    it), the grace period = the drain window, the checkpoint claim as a volume."""
    return {
        "restartPolicy": "Never",
        "terminationGracePeriodSeconds": drain_seconds,
        "containers": [container],
        "volumes": [
            {"name": CHECKPOINT_VOLUME, "persistentVolumeClaim": {"claimName": claim_name}}
        ],
    }


def indexed_job_spec(
    template: Obj, *, completions: int, parallelism: int, backoff_limit: int
) -> Obj:
    """An Indexed Job whose reclaimed pods do not count as failures: ``podFailurePolicy``
    ignores pods with ``DisruptionTarget`` (a reclaim requeues the index, real crashes count
    against ``backoffLimit``); ``podReplacementPolicy: Failed`` starts a replacement only once
    the old pod has ended, so two pods never write one index's checkpoint."""
    return {
        "completionMode": "Indexed",
        "completions": completions,
        "parallelism": parallelism,
        "backoffLimit": backoff_limit,
        "podReplacementPolicy": "Failed",
        "podFailurePolicy": {
            "rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]
        },
        "template": template,
    }


def preemptible_template(
    pod_spec: Mapping[str, Any],
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
) -> Obj:
    """A pod template pinned to preemptible nodes and labelled with the class, as
    ``together_provider.kubernetes.pod_template`` places one (a test holds them equal)."""
    spec = dict(pod_spec)
    spec["nodeSelector"] = {**spec.get("nodeSelector", {}), COMPUTE_CLASS_LABEL: PREEMPTIBLE}
    metadata: Obj = {"labels": {**(labels or {}), COMPUTE_CLASS_LABEL: PREEMPTIBLE}}
    if annotations:
        metadata["annotations"] = dict(annotations)
    return {"metadata": metadata, "spec": spec}
