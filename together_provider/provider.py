"""Kept for state written before the Cluster moved into `together_provider.cluster`.

Pulumi's dynamic host pickles a provider *by reference*: every Cluster in a state file written
by versions up to the move names `together_provider.provider.ClusterProvider`, and the engine
unpickles that name on every later preview, update and destroy. Deleting this module would make
those stacks unmanageable, so it stays, re-exporting the class from its new home
(`tests/integration/test_old_state.py` runs such a state). New code imports
`together_provider.cluster.provider`.
"""

from together_provider.cluster.provider import ClusterProvider

__all__ = ["ClusterProvider"]
