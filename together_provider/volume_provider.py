"""Kept for state written before the SharedVolume moved into `together_provider.volume`.

Pulumi's dynamic host pickles a provider *by reference*: every SharedVolume in a state file
written by versions up to the move names `together_provider.volume_provider.VolumeProvider`, and
the engine unpickles that name on every later preview, update and destroy. Deleting this module
would make those stacks unmanageable, so it stays, re-exporting the class from its new home
(`tests/integration/test_old_state.py` runs such a state). New code imports
`together_provider.volume.provider`.
"""

from together_provider.volume.provider import VolumeProvider

__all__ = ["VolumeProvider"]
