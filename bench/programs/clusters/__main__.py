"""N Together clusters from the `clusters` config object: the bench's counterpart of the baseline.

Shaped like the baseline program (resources only, no exports) so the ratio measures the Cluster
provider; `exports: true` adds the seven exports per cluster a typical program has, to measure
what they cost on their own.
"""

import pulumi

from together_provider import Cluster, ClusterArgs

EXPORTS = {
    "id": "cluster_id",
    "status": "status",
    "num_gpus": "num_gpus",
    "desired": "desired_preemptible_gpus",
    "allocated": "allocated_preemptible_gpus",
    "events": "preemption_events",
    "kube_config": "kube_config",
}
"""The seven exports a typical program has (the tests' `cluster` program's): suffix -> output."""

config = pulumi.Config()
exports = config.get_bool("exports") or False
for name, spec in config.require_object("clusters").items():
    cluster = Cluster(name, ClusterArgs(**spec))
    if exports:
        for suffix, output in EXPORTS.items():
            pulumi.export(f"{name}_{suffix}", getattr(cluster, output))
