"""Kept for state written while the SharedVolume's provider was declared here: Pulumi pickles a
dynamic provider by reference, and that state names this module's `VolumeProvider`. Never delete
it (the class is derived: `together_provider.registry.SharedVolumeProvider`)."""

from together_provider.registry import SharedVolumeProvider as VolumeProvider  # noqa: F401
