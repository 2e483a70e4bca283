"""Shared volumes (config `volumes`) and clusters (config `clusters`) that attach them.

A cluster's `volume: <key>` attaches that volume: its `volume_id` (so the engine orders them)
and its `region` (so the cluster's check can reject a volume of another region at preview).
Config `host: native` declares both through the native plugin instead of the dynamic host.
"""

import pulumi

import together_provider
from together_provider import native

config = pulumi.Config()
host = native if config.get("host") == "native" else together_provider
volumes = {
    name: host.SharedVolume(name, host.SharedVolumeArgs(**args))
    for name, args in (config.get_object("volumes") or {}).items()
}
for name, volume in volumes.items():
    pulumi.export(f"{name}_volume_id", volume.volume_id)
    pulumi.export(f"{name}_size_tib", volume.size_tib)
    pulumi.export(f"{name}_status", volume.status)
for name, spec in (config.get_object("clusters") or {}).items():
    key = spec.pop("volume", None)
    if key is not None:
        spec["volume_id"] = volumes[key].volume_id
        spec["volume_region"] = volumes[key].region
    cluster = host.Cluster(name, host.ClusterArgs(**spec))
    pulumi.export(f"{name}_id", cluster.cluster_id)
    pulumi.export(f"{name}_volume_name", cluster.volume_name)
