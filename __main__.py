"""The GPU clusters of one environment, declared from its config (stacks/Pulumi.<stack>.yaml).

Every cluster in `clusters` becomes a Together cluster with a standard GPU count and a preemptible
target; every entry of `volumes` a shared volume, attached to the clusters that name it with
`volume: <key>`. A bad config fails here, before any resource is registered, with every problem
listed.
"""

import pulumi

from together_provider import Cluster as DynamicCluster
from together_provider import ClusterArgs, SharedVolumeArgs, native
from together_provider import SharedVolume as DynamicSharedVolume
from together_provider.stack_config import ConfigError, load, project_values

try:
    stack_config = load(project_values(pulumi.get_project(), pulumi.runtime.get_config_env()))
except ConfigError as error:
    # A RunError is reported as a plain message: the config problems, not a Python traceback.
    raise pulumi.RunError(str(error)) from None

# `host: native` manages the volumes and clusters through the native plugin (docs/hosts.md).
native_host = stack_config.host == "native"
SharedVolume = native.SharedVolume if native_host else DynamicSharedVolume
Cluster = native.Cluster if native_host else DynamicCluster

volumes = {
    key: SharedVolume(key, SharedVolumeArgs(**props))
    for key, props in stack_config.volume_props().items()
}
for key, volume in volumes.items():
    pulumi.export(
        f"volume_{key}",
        {"volume_id": volume.volume_id, "size_tib": volume.size_tib, "status": volume.status},
    )

for name, props in stack_config.cluster_props().items():
    attached = stack_config.cluster_volumes.get(name)
    if attached is not None:
        # The id orders the engine (volume first, destroyed last); the region lets the
        # cluster's check reject a volume of another region at preview.
        props |= {
            "volume_id": volumes[attached].volume_id,
            "volume_region": volumes[attached].region,
        }
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
