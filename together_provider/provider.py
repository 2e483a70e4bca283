"""Kept for state written before the Cluster moved into `together_provider.cluster`: Pulumi
pickles a dynamic provider by reference, and that state names this module's `ClusterProvider`
(`tests/integration/test_old_state.py`). Never delete it."""

from together_provider.registry import ClusterProvider as ClusterProvider
