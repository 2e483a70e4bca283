"""Kept for state written while the SharedVolume's provider was declared here: Pulumi pickles a
dynamic provider by reference, and that state names this module's `VolumeProvider`. Never delete
it (the class is derived: `together_provider.registry.SharedVolumeProvider`)."""

from together_provider.dynamic.provider import provider_class
from together_provider.volume import KIND

VolumeProvider = provider_class(KIND)
"""The very class `together_provider.registry.SharedVolumeProvider` is (derived once per kind):
made from the kind here, as the registry imports the kinds and is not imported back."""
