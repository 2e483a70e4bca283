"""Shared volumes: create, resize, delete, and their binding to clusters, kept pure (no HTTP, no
I/O). Together documents the endpoints and the status enum, not the timing: docs/simulator.md
says what the simulator assumes."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any, Final, Protocol

from pydantic import BaseModel, Field, model_validator

from together_api.wire import SharedVolume, VolumeCreateRequest, VolumeStatus, VolumeUpdateRequest
from together_sim.catalogue import region_by_name
from together_sim.echo import echoed, updated
from together_sim.errors import SimError, found

__all__ = [
    "DATACENTER_MISMATCH",
    "NOT_ECHOED",
    "SimVolume",
    "Volumes",
    "check_same_region",
]

DATACENTER_MISMATCH: Final = "Shared volume does not exist in the datacenter"
"""Together's message when a ``volume_id`` lives in another region (quoted by its docs)."""


def check_same_region(volume_region: str, cluster_region: str, *, param: str) -> None:
    """The one region rule of every way a cluster and a volume meet (a ``volume_id`` attached,
    a ``shared_volume`` created with the cluster, an ``instance_cluster_id``): a volume is reachable
    only from clusters of its own region. Together's message leads (its docs quote it)."""
    if volume_region != cluster_region:
        raise SimError(
            400,
            f"{DATACENTER_MISMATCH}: the volume is in {volume_region}, the cluster in "
            f"{cluster_region} ({param}); a volume is reachable only in its own region",
            param=param,
        )


class _Regioned(Protocol):
    @property
    def region(self) -> str: ...


class Placed(Protocol):
    """What a volume's create reads of a cluster (a ``SimCluster``): its id and region. A
    Protocol, so the volumes import nothing of the clusters, which hold volumes."""

    @property
    def cluster_id(self) -> str: ...

    @property
    def spec(self) -> _Regioned: ...


class SimVolume(BaseModel):
    """One volume: its wire fields as the API's create model (``spec``) plus bookkeeping."""

    volume_id: str
    spec: VolumeCreateRequest
    """The accepted create (project and ``is_lifecycle_independent`` filled in), resizes
    applied."""
    created_at: float
    ready_at: float
    attached_to: list[str] = Field(default_factory=list)
    bound_to: list[str] = Field(default_factory=list)
    deleting_since: float | None = None

    @model_validator(mode="before")
    @classmethod
    def _upgrade(cls, data: Any) -> Any:
        """A volume saved before ``spec`` (its wire fields at the top level) still loads."""
        if not isinstance(data, dict) or "spec" in data:
            return data
        fields = VolumeCreateRequest.model_fields
        spec = {k: v for k, v in data.items() if k in fields}
        return {**{k: v for k, v in data.items() if k not in fields}, "spec": spec}

    def status(self, now: float) -> str:
        if self.deleting_since is not None:
            return VolumeStatus.DELETING
        if now < self.ready_at:
            return VolumeStatus.PROVISIONING
        return VolumeStatus.BOUND if self.bound_to else VolumeStatus.AVAILABLE

    def render(self, now: float) -> SharedVolume:
        """The stored fields the response shares (but those Together keeps to itself), plus
        the id and the status."""
        body = echoed(self.spec, SharedVolume, hidden=NOT_ECHOED)
        return SharedVolume.model_validate(
            {**body, "volume_id": self.volume_id, "status": self.status(now)}
        )


NOT_ECHOED: Final = frozenset({"region", "is_lifecycle_independent", "project_id"})
"""Create fields :class:`SharedVolume` could hold but no Together response carries (the SDK's
``ClusterStorage`` has id, name, size and status only)."""


class Volumes:
    """Every shared volume, keyed by id; the world owns one and calls it on cluster events."""

    def __init__(self, provisioning: float, deleting: float) -> None:
        self.by_id: dict[str, SimVolume] = {}
        self._provisioning = provisioning
        self._deleting = deleting

    # ---------------------------------------------------------------- endpoints

    def check_create(self, req: VolumeCreateRequest) -> None:
        if region_by_name(req.region) is None:
            raise SimError(400, f"unknown region {req.region!r}", param="region")
        if req.size_tib < 1:
            raise SimError(
                400,
                f"size_tib must be a whole number of TiB >= 1, got {req.size_tib}",
                param="size_tib",
            )
        if not req.volume_name.strip():
            raise SimError(400, "volume_name must not be empty", param="volume_name")

    def create(
        self,
        req: VolumeCreateRequest,
        *,
        project_id: str,
        now: float,
        clusters: Mapping[str, Placed],
    ) -> SimVolume:
        """``POST .../volumes``: check the request (an ``instance_cluster_id`` must be one of
        ``clusters``, in the volume's region), then provision it."""
        if req.instance_cluster_id is not None:
            placed = clusters.get(req.instance_cluster_id)
            if placed is None:
                raise SimError(
                    400,
                    f"instance_cluster_id {req.instance_cluster_id} is not a cluster",
                    param="instance_cluster_id",
                )
            check_same_region(req.region, placed.spec.region, param="instance_cluster_id")
        self.check_create(req)
        return self.provision(req, project_id=project_id, now=now)

    def provision(self, req: VolumeCreateRequest, *, project_id: str, now: float) -> SimVolume:
        """A new volume for a request `check_create` has passed (a cluster create checks its
        inline volume before the cluster exists, then provisions it here)."""
        filled = {
            "project_id": req.project_id or project_id,
            "is_lifecycle_independent": bool(req.is_lifecycle_independent),
        }
        volume = SimVolume(
            volume_id=f"vol-{uuid.uuid4().hex[:16]}",
            spec=req.model_copy(update=filled),
            created_at=now,
            ready_at=now + self._provisioning,
        )
        self.by_id[volume.volume_id] = volume
        return volume

    def get(self, volume_id: str) -> SimVolume:
        return found(self.by_id, volume_id, "volume")

    def resize(self, req: VolumeUpdateRequest) -> SimVolume:
        volume = self.get(req.volume_id)
        if volume.deleting_since is not None:
            raise SimError(400, f"volume {volume.volume_id} is being deleted", param="volume_id")
        size = volume.spec.size_tib
        if req.size_tib is not None and req.size_tib < size:
            raise SimError(
                400,
                f"size_tib {req.size_tib} is below the current {size} TiB; a volume "
                "only grows (shrinking needs Together support)",
                param="size_tib",
            )
        volume.spec = updated(volume.spec, req)
        return volume

    def delete(self, volume_id: str, now: float) -> None:
        volume = self.get(volume_id)
        if volume.attached_to:
            raise SimError(
                409,
                f"volume {volume_id} is attached to cluster(s) {', '.join(volume.attached_to)}; "
                "delete the cluster(s) first",
                param="volume_id",
            )
        if volume.deleting_since is None:
            volume.deleting_since = now

    # ---------------------------------------------------------- cluster events

    def check_attachable(self, volume_id: str, region: str) -> SimVolume:
        """The volume a cluster create names: it must exist, live in the region and be usable."""
        volume = self.by_id.get(volume_id)
        if volume is None:
            raise SimError(400, f"shared volume {volume_id} does not exist", param="volume_id")
        check_same_region(volume.spec.region, region, param="volume_id")
        if volume.deleting_since is not None:
            raise SimError(400, f"shared volume {volume_id} is being deleted", param="volume_id")
        return volume

    def attach(self, volume_id: str, cluster_id: str) -> None:
        volume = self.by_id[volume_id]
        if cluster_id not in volume.attached_to:
            volume.attached_to.append(cluster_id)

    def bind(self, volume_ids: list[str], cluster_id: str) -> None:
        """The cluster is Ready: its volumes are bound."""
        for volume_id in volume_ids:
            volume = self.by_id.get(volume_id)
            if volume is not None and cluster_id not in volume.bound_to:
                volume.bound_to.append(cluster_id)

    def release(self, volume_ids: list[str], cluster_id: str, now: float) -> None:
        """The cluster is gone: unbind; a volume no cluster holds goes unless independent (the
        SDK: "When true, the shared volume is not deleted when the cluster is decommissioned";
        the default is false). Until then an attached volume's delete is a 409."""
        for volume_id in volume_ids:
            volume = self.by_id.get(volume_id)
            if volume is None:
                continue
            volume.attached_to = [c for c in volume.attached_to if c != cluster_id]
            volume.bound_to = [c for c in volume.bound_to if c != cluster_id]
            if not volume.attached_to and not volume.spec.is_lifecycle_independent:
                volume.deleting_since = volume.deleting_since or now

    def next_removal(self) -> tuple[float, str] | None:
        """When the next deleting volume disappears, and which."""
        due = [
            (v.deleting_since + self._deleting, v.volume_id)
            for v in self.by_id.values()
            if v.deleting_since is not None
        ]
        return min(due) if due else None

    def forget(self, volume_id: str) -> None:
        self.by_id.pop(volume_id, None)
