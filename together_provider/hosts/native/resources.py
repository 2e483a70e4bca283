# Generated from the field tables by `make sdk-python` (python -m together_provider.codegen
# --write): do not edit; tests/unit/test_codegen.py fails while this file differs.
"""The native-plugin resources of every kind, from its field table, with the same Args and
attributes.
"""

import pulumi

from together_provider import registry
from together_provider.hosts.native._base import NativeResource
from together_provider.resources import (
    ClusterArgs,
    ClusterAttributes,
    SharedVolumeArgs,
    SharedVolumeAttributes,
)

__all__ = [
    "Cluster",
    "ClusterArgs",
    "SharedVolume",
    "SharedVolumeArgs",
]


class Cluster(ClusterAttributes, NativeResource, kind=registry.BY_NAME["Cluster"]):
    """A Together GPU cluster: `num_gpus` standard GPUs (never preempted; at least one 8-GPU node)
    plus a preemptible target, `num_preemptible_gpus`, that Together fills asynchronously at 50% of
    the on-demand price (`allocated_preemptible_gpus` says how much of it is live). Changing either
    count updates it in place; changing what the cluster *is* (name, region, GPU type, cluster type,
    billing, drivers, project, volume) replaces it (docs/reference.md).

    Served by the native plugin (`together:index:Cluster`): it honours `custom_timeouts`, can be
    imported with `pulumi import`, and one `pulumi up` waits on any number at once.
    """

    def __init__(
        self, resource_name: str, args: ClusterArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__(resource_name, args, opts)


class SharedVolume(SharedVolumeAttributes, NativeResource, kind=registry.BY_NAME["SharedVolume"]):
    """A Together shared volume of `size_tib` whole TiB in `region`, where preemptible nodes write
    checkpoints that outlive them; attach it with `ClusterArgs(volume_id=volume.volume_id,
    volume_region=volume.region)`. Growing `size_tib` is one in-place PUT; a shrink is rejected at
    preview; changing the name, region, project or lifecycle independence replaces it. Deleting it
    is refused while a live cluster uses it.

    Served by the native plugin (`together:index:SharedVolume`): it honours `custom_timeouts`, can
    be imported with `pulumi import`, and one `pulumi up` waits on any number at once.
    """

    def __init__(
        self, resource_name: str, args: SharedVolumeArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__(resource_name, args, opts)
