"""A cluster whose name and project come from another resource: unknown at the first preview."""

import pulumi
from name_source import NameSource

from together_provider import Cluster, ClusterArgs

config = pulumi.Config()
source = NameSource("source", config.require("prefix"))
cluster = Cluster(
    "train",
    ClusterArgs(
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
