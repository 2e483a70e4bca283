"""Clusters (both hosts), a shared volume and plain pulumi-kubernetes workloads for the policy
pack's engine tests, each cluster made from config `cluster` (a valid spec). Config `scenario`
picks what is declared:

- `good`: every policy satisfied (placed workloads, checkpointing Job, independent volume);
- `bad`: every workload and volume policy violated once, with valid clusters (a preemptible
  target on the dynamic one), so the provider's own check passes and nothing bails early;
- `dynamic-cluster` / `native-cluster`: one cluster that breaks the provider's rules;
- `up`: a Pod past the drain window, and a valid cluster that depends on it.

The Kubernetes provider renders manifests to `renderYamlTo` (no API server is needed).
"""

from typing import Any

import pulumi
import pulumi_kubernetes as k8s

import together_provider
from together_provider import native

config = pulumi.Config()
scenario = config.require("scenario")
good = scenario == "good"
SPEC: dict[str, Any] = config.require_object("cluster")  # a valid one: the tests' CLUSTER_SPEC
LABEL = "together.ai/compute-class"
PREEMPTIBLE = {"nodeSelector": {LABEL: "preemptible"}}
OFF = {
    "affinity": {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": LABEL, "operator": "NotIn", "values": ["preemptible"]}
                        ]
                    }
                ]
            }
        }
    }
}
CONTAINER = {"name": "main", "image": "busybox"}


def pod(app: str, spec: dict[str, Any], critical: bool = False) -> dict[str, Any]:
    labels = {"app": app, **({"together.ai/critical": "true"} if critical else {})}
    return {"metadata": {"labels": labels}, "spec": {"containers": [CONTAINER], **spec}}


if scenario == "dynamic-cluster":
    together_provider.Cluster("dyn", together_provider.ClusterArgs(**{**SPEC, "num_gpus": 0}))
elif scenario == "native-cluster":
    native.Cluster("nat", native.ClusterArgs(**{**SPEC, "num_preemptible_gpus": 12}))
elif scenario == "up":
    k8s_provider = k8s.Provider(
        "render", render_yaml_to_directory=config.require("renderYamlTo"), kubeconfig=""
    )
    shell = k8s.core.v1.Pod(
        "shell",
        spec={"containers": [CONTAINER], "terminationGracePeriodSeconds": 600},
        opts=pulumi.ResourceOptions(provider=k8s_provider),
    )
    together_provider.Cluster(
        "train",
        together_provider.ClusterArgs(**SPEC),
        pulumi.ResourceOptions(depends_on=[shell]),
    )
else:
    volume = together_provider.SharedVolume(
        "ckpt",
        together_provider.SharedVolumeArgs(
            region="us-central-8", size_tib=1, project_id="proj-test", is_lifecycle_independent=good
        ),
    )
    together_provider.Cluster(
        "dyn",
        together_provider.ClusterArgs(
            **SPEC, num_preemptible_gpus=8, volume_id=volume.volume_id, volume_region=volume.region
        ),
    )
    native.Cluster("nat", native.ClusterArgs(**{**SPEC, "num_gpus": 16}))
    opts = pulumi.ResourceOptions(
        provider=k8s.Provider(
            "render", render_yaml_to_directory=config.require("renderYamlTo"), kubeconfig=""
        )
    )
    # critical-workload-off-preemptible: a critical API server on preemptible nodes
    k8s.apps.v1.Deployment(
        "api",
        spec={
            "selector": {"matchLabels": {"app": "api"}},
            "template": pod("api", OFF if good else PREEMPTIBLE, critical=True),
        },
        opts=opts,
    )
    # disruption-budget-off-preemptible: a budget protects pods that may land on preemptible nodes
    k8s.apps.v1.StatefulSet(
        "web",
        spec={
            "selector": {"matchLabels": {"app": "web"}},
            "serviceName": "web",
            "template": pod("web", OFF if good else {}),
        },
        opts=opts,
    )
    k8s.policy.v1.PodDisruptionBudget(
        "web-pdb", spec={"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}, opts=opts
    )
    # drain-window-grace-period and compute-class-constraint: an unconstrained pod, 600 s grace
    k8s.core.v1.Pod(
        "shell",
        spec={
            "containers": [CONTAINER],
            "terminationGracePeriodSeconds": 60 if good else 600,
            **(PREEMPTIBLE if good else {}),
        },
        opts=opts,
    )
    # preemptible-job-checkpoints: Job: a podFailurePolicy that names DisruptionTarget but fails
    # or counts it; CronJob: no podFailurePolicy and no checkpoint mount
    checkpointed = {
        **PREEMPTIBLE,
        "restartPolicy": "Never",
        "volumes": [{"name": "ckpt", "persistentVolumeClaim": {"claimName": "ckpt"}}],
        "containers": [{**CONTAINER, "volumeMounts": [{"name": "ckpt", "mountPath": "/ckpt"}]}],
    }
    # preemptible-job-shell-wrapper: Job: a shell as PID 1 (two commands, no exec); good: the
    # same command under the launcher
    wrapped = ["sh", "-c", "python prep.py; python train.py"]
    launched = ["python", "-m", "together_worker", "run", "--", *wrapped]
    train = {
        **checkpointed,
        "containers": [{**checkpointed["containers"][0], "command": launched if good else wrapped}],
    }
    ignore = {"rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]}
    counted = {
        "rules": [
            {"action": action, "onPodConditions": [{"type": "DisruptionTarget"}]}
            for action in ("FailJob", "Count")
        ]
    }
    k8s.batch.v1.Job(
        "train",
        spec={
            "template": pod("train", train),
            "podFailurePolicy": ignore if good else counted,
        },
        opts=opts,
    )
    k8s.batch.v1.CronJob(
        "nightly",
        spec={
            "schedule": "@daily",
            "jobTemplate": {
                "spec": {
                    "template": pod(
                        "nightly",
                        checkpointed if good else {**PREEMPTIBLE, "restartPolicy": "Never"},
                    ),
                    **({"podFailurePolicy": ignore} if good else {}),
                }
            },
        },
        opts=opts,
    )
