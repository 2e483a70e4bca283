"""Kept for state written before the SharedVolume moved into `together_provider.volume`: Pulumi
pickles a dynamic provider by reference, and that state names this module's `VolumeProvider`
(`tests/integration/test_old_state.py`). Never delete it."""

from together_provider.registry import SharedVolumeProvider as VolumeProvider  # noqa: F401
