"""The `cluster` program on the native plugin: every cluster from the `clusters` config object,
with optional `customTimeouts` (seconds) from the `timeouts` config object."""

import pulumi

from together_provider.native import Cluster, ClusterArgs

config = pulumi.Config()
timeouts = config.get_object("timeouts") or {}
for name, spec in config.require_object("clusters").items():
    custom = (
        pulumi.CustomTimeouts(**{k: f"{v}s" for k, v in timeouts.items()}) if timeouts else None
    )
    cluster = Cluster(name, ClusterArgs(**spec), pulumi.ResourceOptions(custom_timeouts=custom))
    pulumi.export(f"{name}_id", cluster.cluster_id)
    pulumi.export(f"{name}_status", cluster.status)
    pulumi.export(f"{name}_num_gpus", cluster.num_gpus)
    pulumi.export(f"{name}_desired", cluster.desired_preemptible_gpus)
    pulumi.export(f"{name}_allocated", cluster.allocated_preemptible_gpus)
    pulumi.export(f"{name}_events", cluster.preemption_events)
    pulumi.export(f"{name}_kube_config", cluster.kube_config)
    pulumi.export(f"{name}_int_counts", cluster.num_gpus.apply(lambda n: type(n).__name__))
