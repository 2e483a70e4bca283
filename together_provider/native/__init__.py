"""The native Pulumi plugin for Together clusters: `together:index:Cluster` for any language.

`from together_provider.native import Cluster, ClusterArgs` is the one-import switch from the
dynamic `together_provider.Cluster`. The plugin itself is the `pulumi-resource-together` console
script installed with this package (`together_provider.native.plugin`).
"""

from together_provider.native.package_schema import CLUSTER_TOKEN, PACKAGE
from together_provider.native.resource import Cluster
from together_provider.resource import ClusterArgs

__all__ = ["CLUSTER_TOKEN", "PACKAGE", "Cluster", "ClusterArgs"]
