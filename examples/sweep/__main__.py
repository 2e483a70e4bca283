"""A hyperparameter sweep as a checkpointing job array on preemptible nodes, and an evaluation
server on the standard node.

Each of `trials` indexes resumes from `$CHECKPOINT_DIR/$JOB_COMPLETION_INDEX`. When Together
reclaims a node, its pods get SIGTERM and `DRAIN_WINDOW_SECONDS` (at most 300 s) to write a
checkpoint; the Job's pod failure policy then requeues the index without counting it against
`backoffLimit`, so only real crashes can fail the sweep.

The checkpoints go to a Together shared volume (`checkpointTib` TiB, default 2) attached to the
cluster: the job's claim binds to the volume's PersistentVolume, so a checkpoint survives the
node it was written from, and the volume outlives the cluster.

The trial code (sweep/trial.py, in the image with together_worker) resumes from the latest
checkpoint, checkpoints on SIGTERM and exits 143: a trial that exits 0 is counted as completed,
cut short or not (docs/workloads.md). `python -m together_drill` shows it (docs/drill.md).

The evaluation server (`servingReplicas`, default 1; 0 leaves it out) serves the sweep's
checkpoints on the standard node, which is never reclaimed.

Config: `projectId` (Together needs a project for a preemptible target) and, optionally,
`cluster` (ClusterArgs fields, overriding the defaults below), `checkpointTib`, `image`,
`trials`, `parallelism`, `backoffLimit`, `drainSeconds`, `podAnnotations` (an object, put on
every trial pod), `servingReplicas`, `servingImage`, `renderYamlTo`, a directory to write
the manifests to instead of applying them (no Kubernetes cluster needed), and `host`: `native`
declares the volume and the cluster through the native plugin (`pulumi-resource-together`)
instead of the dynamic host; the workloads are the same on either. Without `renderYamlTo` the
workloads are applied to the cluster's API server through its kubeconfig.
"""

from typing import Any

import pulumi

import together_provider
from together_provider import native
from together_provider.kubernetes import (
    CheckpointingWorker,
    CheckpointingWorkerArgs,
    ComputeClass,
    ServingReplicas,
    ServingReplicasArgs,
    cluster_provider,
)

CLUSTER_DEFAULTS: dict[str, Any] = {
    "region": "us-central-8",
    "gpu_type": "H100_SXM",
    "num_gpus": 8,
    "num_preemptible_gpus": 32,
    "cuda_version": "12.8",
    "nvidia_driver_version": "570",
}

config = pulumi.Config()
host = native if config.get("host") == "native" else together_provider
CLUSTER_DEFAULTS["project_id"] = config.get("projectId")  # needed for a preemptible target
cluster_args = {**CLUSTER_DEFAULTS, **(config.get_object("cluster") or {})}
checkpoints = host.SharedVolume(
    "sweep-checkpoints",
    host.SharedVolumeArgs(
        region=cluster_args["region"],
        size_tib=config.get_int("checkpointTib", 2),
        project_id=cluster_args["project_id"],
    ),
)
cluster = host.Cluster(
    "sweep",
    host.ClusterArgs(
        **cluster_args, volume_id=checkpoints.volume_id, volume_region=checkpoints.region
    ),
)
provider = cluster_provider(
    "sweep-k8s", cluster, render_yaml_to_directory=config.get("renderYamlTo")
)

sweep = CheckpointingWorker(
    "sweep",
    CheckpointingWorkerArgs(
        image=config.get("image") or "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime",
        # The trial (sweep/trial.py) keeps the drain-window contract with together_worker; the
        # launcher as PID 1 passes SIGTERM on and never exits 0 after a reclaim.
        command=["python", "-m", "together_worker", "run", "--", "python", "-m", "sweep.trial"],
        completions=config.get_int("trials", 16),
        parallelism=config.get_int("parallelism", 4),
        cluster=cluster,
        resources={"limits": {"nvidia.com/gpu": 8}},
        backoff_limit=config.get_int("backoffLimit", 3),
        drain_seconds=config.get_int("drainSeconds", 300),
        checkpoint_size="500Gi",  # the claim's request; the volume itself is checkpointTib
        pod_annotations={k: str(v) for k, v in (config.get_object("podAnnotations") or {}).items()},
    ),
    opts=pulumi.ResourceOptions(provider=provider),
)
serving_replicas = config.get_int("servingReplicas", 1)
if serving_replicas:
    evaluation = ServingReplicas(
        "sweep-eval",
        ServingReplicasArgs(
            image=config.get("servingImage") or "vllm/vllm-openai:v0.6.3",
            replicas=serving_replicas,
            compute_class=ComputeClass.STANDARD,
            cluster=cluster,
            resources={"limits": {"nvidia.com/gpu": 1}},
        ),
        opts=pulumi.ResourceOptions(provider=provider),
    )
    pulumi.export("serving", evaluation.deployment.metadata.name)

pulumi.export("cluster_id", cluster.cluster_id)
pulumi.export("checkpoint_volume_id", checkpoints.volume_id)
pulumi.export("job", sweep.job.metadata.name)
pulumi.export("kubeconfig", pulumi.Output.secret(cluster.kube_config))
