"""Kept for state written while the Cluster's provider was declared here: Pulumi pickles a
dynamic provider by reference, and that state names this module's `ClusterProvider`. Never
delete it (the class is derived: `together_provider.registry.ClusterProvider`)."""

from together_provider.cluster import KIND
from together_provider.dynamic.provider import provider_class

ClusterProvider = provider_class(KIND)
"""The very class `together_provider.registry.ClusterProvider` is (derived once per kind):
made from the kind here, as the registry imports the kinds and is not imported back."""
