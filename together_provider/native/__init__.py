"""The native Pulumi plugin for Together: `together:index:Cluster` and
`together:index:SharedVolume`, for any language.

`from together_provider.native import Cluster, ClusterArgs, SharedVolume, SharedVolumeArgs` is
the one-import switch from the dynamic `together_provider` resources. The plugin itself is the
`pulumi-resource-together` console script installed with this package
(`together_provider.native.plugin`).
"""

from together_provider import registry
from together_provider.cluster.resource import ClusterArgs
from together_provider.framework.kind import PACKAGE
from together_provider.native.resource import Cluster, SharedVolume
from together_provider.volume.resource import SharedVolumeArgs

CLUSTER_TOKEN = registry.CLUSTER.token
VOLUME_TOKEN = registry.VOLUME.token

__all__ = [
    "CLUSTER_TOKEN",
    "PACKAGE",
    "VOLUME_TOKEN",
    "Cluster",
    "ClusterArgs",
    "SharedVolume",
    "SharedVolumeArgs",
]
