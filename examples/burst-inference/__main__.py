"""Serving replicas on standard nodes, burst replicas on preemptible nodes, one Service over both.

The standard replicas carry the baseline load and are never reclaimed (a disruption budget covers
upgrades); the burst replicas add cheap capacity that Together may reclaim with a 300 s drain
window, so on SIGTERM they stop taking traffic and finish in-flight requests within
`burstGraceSeconds`.

Config: `projectId` (Together needs a project for a preemptible target) and, optionally,
`cluster` (ClusterArgs fields, overriding the defaults below), `image`,
`servingReplicas`, `burstReplicas`, `burstGraceSeconds` and `renderYamlTo`, a
directory to write the manifests to instead of applying them (no Kubernetes cluster needed).
"""

from dataclasses import replace
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from together_provider import Cluster, ClusterArgs
from together_provider.kubernetes import (
    ComputeClass,
    ServingReplicas,
    ServingReplicasArgs,
    cluster_provider,
)

CLUSTER_DEFAULTS: dict[str, Any] = {
    "region": "us-central-8",
    "gpu_type": "H100_SXM",
    "num_gpus": 8,
    "num_preemptible_gpus": 16,
    "cuda_version": "12.8",
    "nvidia_driver_version": "570",
}

config = pulumi.Config()
CLUSTER_DEFAULTS["project_id"] = config.get("projectId")  # needed for a preemptible target
cluster = Cluster(
    "inference", ClusterArgs(**{**CLUSTER_DEFAULTS, **(config.get_object("cluster") or {})})
)
provider = cluster_provider(
    "inference-k8s", cluster, render_yaml_to_directory=config.get("renderYamlTo")
)
on_cluster = pulumi.ResourceOptions(provider=provider)

image = config.get("image") or "vllm/vllm-openai:v0.6.3"
one_gpu = {"limits": {"nvidia.com/gpu": 1}}
serving_args = ServingReplicasArgs(
    image=image,
    replicas=config.get_int("servingReplicas", 2),
    compute_class=ComputeClass.STANDARD,
    cluster=cluster,
    app="llm",
    resources=one_gpu,
)
serving = ServingReplicas("llm-serve", serving_args, opts=on_cluster)
# The same server on preemptible nodes: more replicas, and a grace period for the drain window.
burst_args = replace(
    serving_args,
    replicas=config.get_int("burstReplicas", 4),
    compute_class=ComputeClass.PREEMPTIBLE,
    grace_seconds=config.get_int("burstGraceSeconds", 60),
)
burst = ServingReplicas("llm-burst", burst_args, opts=on_cluster)
# Selects on the shared `app` label only, so traffic spreads over standard and burst replicas.
service = k8s.core.v1.Service(
    "llm",
    metadata={"name": "llm", "labels": {"app.kubernetes.io/name": "llm"}},
    spec={
        "selector": {"app.kubernetes.io/name": "llm"},
        "ports": [{"name": "http", "port": 80, "targetPort": "http"}],
    },
    opts=on_cluster,
)

pulumi.export("cluster_id", cluster.cluster_id)
pulumi.export("service", service.metadata.name)
pulumi.export("deployments", [serving.deployment.metadata.name, burst.deployment.metadata.name])
