"""The SharedVolume dynamic provider: Pulumi's dynamic-provider hooks over the SharedVolume kind.

Every decision lives in `volume.rules` and `volume.lifecycle`; what every dynamic provider shares
(credentials, one API client per call, progress, pickling by reference) lives in
`framework.dynamic`.

State written before the move into `volume/` names
`together_provider.volume_provider.VolumeProvider`; that module re-exports this class.
"""

from __future__ import annotations

from together_provider.framework.dynamic import LifecycleProvider
from together_provider.volume.kind import KIND

__all__ = ["VolumeProvider"]


class VolumeProvider(LifecycleProvider):
    """Manages one Together shared volume per resource through `VolumeLifecycle`."""

    KIND = KIND
