"""The Cluster kind: its entry in the registry (`together_provider.registry`)."""

from __future__ import annotations

from typing import Final

from together_provider.cluster.rules import RULEBOOK
from together_provider.cluster.table import CLUSTER, TYPE_NAME
from together_provider.framework.kind import Attach, Kind, StackExport

KIND: Final = Kind(
    type_name=TYPE_NAME,
    package="together_provider.cluster",
    schema=CLUSTER,
    rulebook=RULEBOOK,
    lifecycle_class="ClusterLifecycle",
    config_key="clusters",
    docs_marker="",
    native_notes="`numGpus` counts standard GPUs; `numPreemptibleGpus` is the preemptible "
    "target, filled asynchronously.",
    stack_required="clusters.train.numGpus 8",
    stack_defaults=None,
    # The id orders the engine (volume first, destroyed last); the region lets the cluster's
    # check reject a volume of another region at preview.
    attaches=(
        Attach(
            key="volume",
            target="volumes",
            props={"volume_id": "volume_id", "volume_region": "region"},
            checked="volume_region",
            against="region",
        ),
    ),
    stack_exports=(
        StackExport(
            "{name}",
            lambda cluster: {
                "cluster_id": cluster.cluster_id,
                "status": cluster.status,
                "standard_gpus": cluster.num_gpus,
                "preemptible_target": cluster.desired_preemptible_gpus,
                "preemptible_allocated": cluster.allocated_preemptible_gpus,
                "recent_preemptions": cluster.preemption_events.apply(len),
            },
        ),
        StackExport("{name}_kubeconfig", lambda cluster: cluster.kube_config, secret=True),
    ),
    preview_class="ClusterPreview",
)
