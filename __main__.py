"""The GPU clusters of one environment, declared from its config (stacks/Pulumi.<stack>.yaml).

Every cluster in `clusters` becomes a Together cluster with a standard GPU count and a preemptible
target. A bad config fails here, before any resource is registered, with every problem listed.
"""

import pulumi

from together_provider import Cluster as DynamicCluster
from together_provider import ClusterArgs, native
from together_provider.stack_config import ConfigError, load, project_values

try:
    stack_config = load(project_values(pulumi.get_project(), pulumi.runtime.get_config_env()))
except ConfigError as error:
    # A RunError is reported as a plain message: the config problems, not a Python traceback.
    raise pulumi.RunError(str(error)) from None

# `host: native` manages the clusters through the native plugin (README: "Two provider hosts").
Cluster = native.Cluster if stack_config.host == "native" else DynamicCluster

for name, props in stack_config.cluster_props().items():
    cluster = Cluster(name, ClusterArgs(**props))
    pulumi.export(
        name,
        {
            "cluster_id": cluster.cluster_id,
            "status": cluster.status,
            "standard_gpus": cluster.num_gpus,
            "preemptible_target": cluster.desired_preemptible_gpus,
            "preemptible_allocated": cluster.allocated_preemptible_gpus,
            "recent_preemptions": cluster.preemption_events.apply(len),
        },
    )
    pulumi.export(f"{name}_kubeconfig", pulumi.Output.secret(cluster.kube_config))
