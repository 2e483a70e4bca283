"""One Together cluster whose every argument comes from the `clusters` config object."""

import pulumi

from together_provider import Cluster, ClusterArgs

config = pulumi.Config()
for name, spec in config.require_object("clusters").items():
    cluster = Cluster(name, ClusterArgs(**spec))
    pulumi.export(f"{name}_id", cluster.cluster_id)
    pulumi.export(f"{name}_status", cluster.status)
    pulumi.export(f"{name}_num_gpus", cluster.num_gpus)
    pulumi.export(f"{name}_desired", cluster.desired_preemptible_gpus)
    pulumi.export(f"{name}_allocated", cluster.allocated_preemptible_gpus)
    pulumi.export(f"{name}_events", cluster.preemption_events)
    pulumi.export(f"{name}_kube_config", cluster.kube_config)
