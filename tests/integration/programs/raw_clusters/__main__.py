"""Clusters declared from raw property dicts, bypassing ClusterArgs.

`clusters` maps a resource name to the exact properties the provider's check receives, so a
test can send what ClusterArgs would refuse in Python (unknown keys, missing required fields)
and prove the provider, not the program, rejects it.
"""

from typing import Any

import pulumi
from pulumi.dynamic import Resource

from together_provider.cluster.provider import ClusterProvider
from together_provider.cluster.table import CLUSTER


class RawCluster(Resource, module="together", name="Cluster"):
    def __init__(self, name: str, props: dict[str, Any]) -> None:
        secret = pulumi.ResourceOptions(additional_secret_outputs=list(CLUSTER.secret_outputs))
        super().__init__(
            ClusterProvider(), name, {**props, **dict.fromkeys(CLUSTER.output_names)}, secret
        )


for name, spec in pulumi.Config().require_object("clusters").items():
    RawCluster(name, {"cluster_name": name, **spec})
