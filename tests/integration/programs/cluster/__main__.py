"""Every Together cluster from the `clusters` config object, with every argument from it.

Config `host: native` declares them through the native plugin instead of the dynamic host, and
there a `timeouts` object (seconds) becomes each cluster's `customTimeouts`.
"""

import pulumi

import together_provider
from together_provider import native

config = pulumi.Config()
host = native if config.get("host") == "native" else together_provider
timeouts = config.get_object("timeouts") or {}
custom = pulumi.CustomTimeouts(**{k: f"{v}s" for k, v in timeouts.items()}) if timeouts else None
for name, spec in config.require_object("clusters").items():
    opts = pulumi.ResourceOptions(custom_timeouts=custom)
    cluster = host.Cluster(name, host.ClusterArgs(**spec), opts)
    pulumi.export(f"{name}_id", cluster.cluster_id)
    pulumi.export(f"{name}_status", cluster.status)
    pulumi.export(f"{name}_num_gpus", cluster.num_gpus)
    pulumi.export(f"{name}_desired", cluster.desired_preemptible_gpus)
    pulumi.export(f"{name}_allocated", cluster.allocated_preemptible_gpus)
    pulumi.export(f"{name}_events", cluster.preemption_events)
    pulumi.export(f"{name}_kube_config", cluster.kube_config)
    # An input the program set, and one it left unset (an output resolving to None all the same).
    pulumi.export(f"{name}_reservation_end_time", cluster.reservation_end_time)
    pulumi.export(f"{name}_capacity_pool_id", cluster.capacity_pool_id)
    # The type the outputs arrive as: the declared one casts the engine's 8.0 to 8.
    pulumi.export(f"{name}_int_counts", cluster.num_gpus.apply(lambda n: type(n).__name__))
