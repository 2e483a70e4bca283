"""The `SharedVolume` resource a Pulumi program declares: a Together shared volume for checkpoints.

Preemptible nodes get 5 minutes to checkpoint before a reclaim removes them; the checkpoints go
to a shared volume that outlives the nodes. Declare it beside the cluster and attach it:

    volume = SharedVolume("checkpoints", SharedVolumeArgs(region="us-central-8", size_tib=4))
    cluster = Cluster("train", ClusterArgs(..., volume_id=volume.volume_id,
                                           volume_region=volume.region))

The engine creates the volume first (the cluster's input depends on its output) and destroys it
last; `volume_region` lets the cluster's check reject a volume of another region at preview.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import pulumi
from pulumi.dynamic import Resource

from together_provider.volume.provider import VolumeProvider
from together_provider.volume.table import TYPE_MODULE, TYPE_NAME, VOLUME, VOLUME_TYPE

__all__ = ["VOLUME_TYPE", "SharedVolume", "SharedVolumeArgs"]


@dataclass
class SharedVolumeArgs:
    """A Together shared volume: `size_tib` whole TiB in `region`, growable in place.

    The typed mirror of the field table (`volume.table.VolumeSpec`); a unit test keeps the two
    equal.
    """

    region: pulumi.Input[str]
    size_tib: pulumi.Input[int]
    volume_name: pulumi.Input[str] | None = None
    project_id: pulumi.Input[str] | None = None
    is_lifecycle_independent: pulumi.Input[bool] = True
    ready_timeout_seconds: pulumi.Input[float] = 1800.0
    adopt_volume_id: pulumi.Input[str] | None = None


class SharedVolume(Resource, module=TYPE_MODULE, name=TYPE_NAME):
    """A Together shared volume (`pulumi-python:dynamic/together:SharedVolume`).

    Growing `size_tib` is one in-place PUT; a shrink is rejected at preview; changing the name,
    region, project or lifecycle independence replaces it. Deleting it is refused while a live
    cluster uses it.
    """

    volume_name: pulumi.Output[str]
    region: pulumi.Output[str]
    size_tib: pulumi.Output[int]
    project_id: pulumi.Output[str]
    is_lifecycle_independent: pulumi.Output[bool]
    volume_id: pulumi.Output[str]
    status: pulumi.Output[str]
    cluster_ids: pulumi.Output[list[str]]

    def __init__(
        self,
        resource_name: str,
        args: SharedVolumeArgs,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        props: dict[str, Any] = {
            f.name: getattr(args, f.name) for f in fields(args) if getattr(args, f.name) is not None
        }
        props.setdefault("volume_name", resource_name)
        props.update(dict.fromkeys(VOLUME.output_names))
        super().__init__(VolumeProvider(), resource_name, props, opts)
        # The id *is* Together's volume id. The engine keeps a resource's id known while it is
        # previewed for an in-place update, but not its other outputs (a dynamic provider cannot
        # preview), so a cluster given the `volume_id` output would preview as replaced every
        # time its volume grows; the id is unknown only when the volume is created or replaced.
        self.volume_id = self.id
