"""N Together clusters from the `clusters` config object: the bench's counterpart of the baseline.

Shaped like the baseline program (resources only, no exports) so the ratio measures the Cluster
provider; `exports: true` adds the seven exports per cluster a typical program has, to measure
what they cost on their own.
"""

import pulumi

from together_provider import Cluster, ClusterArgs

config = pulumi.Config()
exports = config.get_bool("exports") or False
for name, spec in config.require_object("clusters").items():
    cluster = Cluster(name, ClusterArgs(**spec))
    if exports:
        pulumi.export(f"{name}_id", cluster.cluster_id)
        pulumi.export(f"{name}_status", cluster.status)
        pulumi.export(f"{name}_num_gpus", cluster.num_gpus)
        pulumi.export(f"{name}_desired", cluster.desired_preemptible_gpus)
        pulumi.export(f"{name}_allocated", cluster.allocated_preemptible_gpus)
        pulumi.export(f"{name}_events", cluster.preemption_events)
        pulumi.export(f"{name}_kube_config", cluster.kube_config)
