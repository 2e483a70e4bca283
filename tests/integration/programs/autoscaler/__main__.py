"""A cluster with no preemptible target yet, and the autoscaler deployed on its standard node.

Config: `cluster` (ClusterArgs fields), `apiKey` (a secret: the key the controller gets in its
Secret), `baseUrl` (the Together host the controller talks to), `max` (the ceiling) and,
optionally, `renderYamlTo` (write the manifests there instead of applying them)."""

import pulumi

from together_provider import Cluster, ClusterArgs
from together_provider.kubernetes import (
    PreemptibleAutoscaler,
    PreemptibleAutoscalerArgs,
    cluster_provider,
)

config = pulumi.Config()
cluster = Cluster("burst", ClusterArgs(**config.require_object("cluster")))
provider = cluster_provider(
    "burst-k8s", cluster, render_yaml_to_directory=config.get("renderYamlTo")
)
autoscaler = PreemptibleAutoscaler(
    "burst",
    PreemptibleAutoscalerArgs(
        cluster=cluster,
        api_key=config.require_secret("apiKey"),
        image="example.invalid/together-autoscaler:test",
        max_preemptible_gpus=config.require_int("max"),
        base_url=config.require("baseUrl"),
    ),
    opts=pulumi.ResourceOptions(providers=[provider]),
)
pulumi.export("cluster_id", cluster.cluster_id)
pulumi.export("namespace", autoscaler.namespace_name)
pulumi.export("service_account", autoscaler.service_account_name)
