"""The simulator's built-in region catalogue (shaped like ``GET /v1/compute/regions``) and default
capacity, so a create can name a real region, GPU type and driver with no setup."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from together_api.wire import DriverVersion, Region

__all__ = [
    "DEFAULT_PREEMPTIBLE_GPUS",
    "DEFAULT_PROJECT_ID",
    "DEFAULT_STANDARD_GPUS",
    "REGIONS",
    "Capacity",
    "find_driver",
    "region_by_name",
]

DEFAULT_PROJECT_ID: Final = "proj-sim-default"
"""The project of the simulator's API key: used when a request names none (see /v3/whoami)."""
DEFAULT_STANDARD_GPUS: Final = 256
DEFAULT_PREEMPTIBLE_GPUS: Final = 64
"""Standard GPUs are generous by default and spare preemptible GPUs scarce, so that "allocated
below the preemptible target" is easy to provoke."""


@dataclass
class Capacity:
    """Total GPUs Together has for one region x GPU type (used + spare)."""

    standard_gpus: int = DEFAULT_STANDARD_GPUS
    preemptible_gpus: int = DEFAULT_PREEMPTIBLE_GPUS


def _drivers(region: str, pairs: list[tuple[str, str]]) -> list[DriverVersion]:
    return [
        DriverVersion(
            id=f"{region}-cuda{cuda}-nvidia{driver}",
            cuda_version=cuda,
            nvidia_driver_version=driver,
            os="ubuntu-22.04",
        )
        for cuda, driver in pairs
    ]


REGIONS: Final[tuple[Region, ...]] = (
    Region(
        name="us-central-8",
        supported_instance_types=["H100_SXM", "H200_SXM"],
        driver_versions=_drivers(
            "us-central-8", [("12.9", "575"), ("12.8", "570"), ("13.1", "590"), ("13.1", "580")]
        ),
    ),
    Region(
        name="us-central-2",
        supported_instance_types=["RTX_6000_PCI", "H100_SXM"],
        driver_versions=_drivers("us-central-2", [("12.8", "570"), ("12.6", "560")]),
    ),
    Region(
        name="us-west-2",
        supported_instance_types=["B200_SXM", "H100_SXM"],
        driver_versions=_drivers("us-west-2", [("12.9", "575"), ("12.8", "570")]),
    ),
)


def region_by_name(name: str) -> Region | None:
    return next((r for r in REGIONS if r.name == name), None)


def find_driver(
    region: Region,
    *,
    version_id: str | None = None,
    cuda_version: str | None = None,
    nvidia_driver_version: str | None = None,
) -> DriverVersion | None:
    """The catalogue entry matching every selector given, or None."""
    for entry in region.driver_versions:
        if version_id is not None and entry.id != version_id:
            continue
        if cuda_version is not None and entry.cuda_version != cuda_version:
            continue
        if nvidia_driver_version is not None and entry.nvidia_driver_version != (
            nvidia_driver_version
        ):
            continue
        return entry
    return None
