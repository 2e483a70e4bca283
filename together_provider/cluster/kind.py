"""The Cluster kind: its entry in the registry (`together_provider.registry`)."""

from __future__ import annotations

from typing import Final

from together_provider.cluster.rules import RULEBOOK
from together_provider.cluster.table import CLUSTER, TYPE_NAME
from together_provider.framework.kind import Kind

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
)
