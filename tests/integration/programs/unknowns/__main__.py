"""A cluster whose name and project come from another resource: unknown at the first preview.
Config `host: native` declares the cluster through the native plugin instead of the dynamic host.
"""

import pulumi
from name_source import NameSource

import together_provider
from together_provider import native

config = pulumi.Config()
host = native if config.get("host") == "native" else together_provider
source = NameSource("source", config.require("prefix"))
cluster = host.Cluster(
    "train",
    host.ClusterArgs(
        cluster_name=source.value,
        project_id=source.value,
        region="us-central-8",
        gpu_type="H100_SXM",
        num_gpus=config.require_int("numGpus"),
        num_preemptible_gpus=8,
        cuda_version="12.8",
        nvidia_driver_version="570",
    ),
)
pulumi.export("name", cluster.cluster_name)
