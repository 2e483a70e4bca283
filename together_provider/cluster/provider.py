"""Kept for state written while the Cluster's provider was declared here: Pulumi pickles a
dynamic provider by reference, and that state names this module's `ClusterProvider`. Never
delete it (the class is derived: `together_provider.registry.ClusterProvider`)."""

from together_provider.registry import ClusterProvider as ClusterProvider
