"""The Cluster resource kind: a Together GPU cluster, `num_gpus` standard GPUs plus a preemptible
target. Its `KIND` is the entry in `together_provider.registry` both hosts derive from."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from together_provider.cluster.rules import RULEBOOK
from together_provider.cluster.table import CLUSTER, TYPE_NAME
from together_provider.extensions import (
    Attach,
    ExportsExtension,
    NativeExtension,
    PreviewExtension,
    ProgramExtension,
    StackConfigExtension,
    StackExport,
)
from together_provider.framework.kind import Kind

if TYPE_CHECKING:
    from together_provider.cluster.lifecycle import ClusterLifecycle
    from together_provider.preview_parts.kinds import KindPreview


def _lifecycle() -> type[ClusterLifecycle]:
    """Imported on first use: it loads the API client (httpx, pydantic), which a preview never
    needs."""
    from together_provider.cluster.lifecycle import ClusterLifecycle

    return ClusterLifecycle


def _preview(kind: Kind) -> KindPreview:
    """Its part of the PR comment, imported when a comment is rendered."""
    from together_provider.cluster.preview import ClusterPreview

    return ClusterPreview(kind)


KIND: Final = Kind(
    type_name=TYPE_NAME,
    package=__name__,
    schema=CLUSTER,
    rulebook=RULEBOOK,
    lifecycle=_lifecycle,
    docs_marker="",
    doc="A Together GPU cluster: `num_gpus` standard GPUs (never preempted; at least one 8-GPU "
    "node) plus a preemptible target, `num_preemptible_gpus`, that Together fills asynchronously "
    "at 50% of the on-demand price (`allocated_preemptible_gpus` says how much of it is live). "
    "Changing either count updates it in place; changing what the cluster *is* (name, region, "
    "GPU type, cluster type, billing, drivers, project, volume) replaces it (docs/reference.md).",
    extensions=(
        StackConfigExtension(
            key="clusters",
            required="clusters.train.numGpus 8",
            defaults=None,
            # The id orders the engine (volume first, destroyed last); the region lets the
            # cluster's check reject a volume of another region at preview.
            attaches=(
                Attach(
                    key="volume",
                    target="volumes",
                    props={"volume_id": "volume_id", "volume_region": "region"},
                    checked="volume_region",
                    against="region",
                ),
            ),
        ),
        ExportsExtension(
            (
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
            )
        ),
        PreviewExtension(_preview),
        ProgramExtension(flags={"has_volume": "volume_id"}),
        NativeExtension(
            "`numGpus` counts standard GPUs; `numPreemptibleGpus` is the preemptible target, "
            "filled asynchronously."
        ),
    ),
)
