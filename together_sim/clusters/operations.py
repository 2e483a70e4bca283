"""Create and update as Together validates them, so a program that the real API would refuse fails
against the simulator too; the state changes themselves live in ``lifecycle`` and ``nodes``."""

from __future__ import annotations

from collections.abc import Collection
from datetime import UTC, datetime
from typing import Final

from together_api.wire import (
    AddOnConfig,
    AddOnRequest,
    ClusterCreateRequest,
    ClusterStatus,
    ClusterUpdateRequest,
    DriverVersion,
)
from together_facts.values import GPUS_PER_NODE
from together_sim.catalogue import DEFAULT_PROJECT_ID, find_driver, region_by_name
from together_sim.clusters.context import Operated
from together_sim.clusters.state import SimCluster, reservation_end
from together_sim.echo import updated
from together_sim.errors import SimError
from together_sim.requests import SimCreateRequest
from together_sim.volumes import check_same_region

__all__ = ["create_cluster", "lowers", "update_cluster"]


def _check_count(name: str, value: int, *, minimum: int) -> None:
    if value < minimum or value % GPUS_PER_NODE:
        raise SimError(
            400,
            f"{name} must be a multiple of {GPUS_PER_NODE} and at least {minimum}, got {value}",
            param=name,
        )


def _check_preemptible(target: int, cluster_type: str) -> None:
    _check_count("num_preemptible_gpus", target, minimum=0)
    if target > 0 and cluster_type != "KUBERNETES":
        raise SimError(
            400,
            "preemptible GPUs are only supported on KUBERNETES clusters",
            param="num_preemptible_gpus",
        )


def _driver(req: ClusterCreateRequest) -> DriverVersion:
    region = region_by_name(req.region)
    if region is None:
        raise SimError(400, f"unknown region {req.region!r}", param="region")
    if req.gpu_type not in region.supported_instance_types:
        raise SimError(
            400, f"gpu_type {req.gpu_type} is not offered in {req.region}", param="gpu_type"
        )
    pair = (req.cuda_version, req.nvidia_driver_version)
    if req.nvidia_version_id is None and None in pair:
        raise SimError(
            400, "cuda version and nvidia driver version are required", param="cuda_version"
        )
    entry = find_driver(
        region,
        version_id=req.nvidia_version_id,
        cuda_version=req.cuda_version,
        nvidia_driver_version=req.nvidia_driver_version,
    )
    if entry is None:
        raise SimError(
            400,
            f"no driver catalogue entry in {req.region} for nvidia_version_id="
            f"{req.nvidia_version_id} cuda_version={req.cuda_version} "
            f"nvidia_driver_version={req.nvidia_driver_version}",
            param="nvidia_version_id" if req.nvidia_version_id else "nvidia_driver_version",
        )
    return entry


def check_auto_scale(auto_scale: bool | None, ceiling: int | None, num_gpus: int) -> None:
    """The create's autoscaling settings, as the simulator validates them (400 otherwise)."""
    if not auto_scale:
        return
    if ceiling is None or ceiling % GPUS_PER_NODE or ceiling < num_gpus:
        raise SimError(
            400,
            f"auto_scale_max_gpus must be a multiple of {GPUS_PER_NODE} and at least num_gpus "
            f"({num_gpus}) when auto_scale is true, got {ceiling}",
            param="auto_scale_max_gpus",
        )


def create_cluster(world: Operated, req: SimCreateRequest, *, fail: bool = False) -> SimCluster:
    """Validate ``req`` and add the cluster to ``world`` (status WaitingForControlPlaneNodes).

    Rules (400 unless noted), per Together's docs and SDK: ``num_gpus`` >= 8 and a multiple of 8;
    ``num_preemptible_gpus`` >= 0 and a multiple of 8, and > 0 only on KUBERNETES clusters;
    ``project_id`` required when the target is > 0; region and GPU type in the catalogue; RESERVED
    needs ``duration_days``; ``num_capacity_pool_gpus`` a multiple of 8 and <= ``num_gpus``;
    ``auto_scale`` bounds and the volume as :mod:`together_sim.autoscale` and ``_check_volumes``
    check them; the driver chosen by ``nvidia_version_id`` or the ``cuda_version`` +
    ``nvidia_driver_version`` pair, and listed for the region. Too little standard capacity is
    409 "Out of stock"."""
    driver = _driver(req)
    _check_count("num_gpus", req.num_gpus, minimum=GPUS_PER_NODE)
    cluster_type = req.cluster_type or "KUBERNETES"
    target = req.num_preemptible_gpus or 0
    _check_preemptible(target, cluster_type)
    if target > 0 and not req.project_id:
        raise SimError(
            400, "project_id is required when num_preemptible_gpus > 0", param="project_id"
        )
    if req.billing_type == "RESERVED" and not req.duration_days:
        raise SimError(400, "duration_days is required for RESERVED billing", param="duration_days")
    pool = req.num_capacity_pool_gpus or 0
    if pool % GPUS_PER_NODE or pool > req.num_gpus:
        raise SimError(
            400,
            "num_capacity_pool_gpus must be a multiple of 8 and <= num_gpus",
            param="num_capacity_pool_gpus",
        )
    reserved = req.num_reserved_gpus
    if reserved is None:
        reserved = req.num_gpus if req.billing_type == "RESERVED" else 0
    _check_window(req)
    check_auto_scale(req.auto_scale, req.auto_scale_max_gpus, req.num_gpus)
    _check_volumes(world, req)
    filled = {
        "cluster_type": cluster_type,
        "project_id": req.project_id or DEFAULT_PROJECT_ID,
        "cuda_version": driver.cuda_version,
        "nvidia_driver_version": driver.nvidia_driver_version,
        "nvidia_version_id": driver.id,
        "num_reserved_gpus": reserved,
        "num_capacity_pool_gpus": pool,
        "num_preemptible_gpus": target,
        "install_traefik": bool(req.install_traefik),
    }
    cluster = SimCluster(
        cluster_id=world.new_cluster_id(),
        spec=req.model_copy(update=filled),
        created_at=world.now,
        fail_provisioning=fail,
        autoscaler={"floor": req.num_gpus} if req.auto_scale else {},
    )
    world.add(cluster)
    if req.shared_volume is not None:
        # Checked by _check_volumes before the cluster existed; not checked again.
        inline = world.volumes.provision(
            req.shared_volume,
            project_id=cluster.spec.project_id or DEFAULT_PROJECT_ID,
            now=world.now,
        )
        cluster.volume_ids = [inline.volume_id]
    elif req.volume_id:
        cluster.volume_ids = [req.volume_id]
    for volume_id in cluster.volume_ids:
        world.volumes.attach(volume_id, cluster.cluster_id)
    return cluster


_PREPAID: Final = ("RESERVED", "SCHEDULED_CAPACITY")


def _check_window(req: ClusterCreateRequest) -> None:
    """A reservation window as the SDK documents it: SCHEDULED_CAPACITY needs both ends, an
    end belongs to a prepaid cluster and comes after the start."""
    start, end = req.reservation_start_time, req.reservation_end_time
    if req.billing_type == "SCHEDULED_CAPACITY" and (start is None or end is None):
        raise SimError(
            400,
            "reservation_start_time and reservation_end_time are required for "
            "SCHEDULED_CAPACITY billing",
            param="reservation_end_time",
        )
    if end is not None and req.billing_type not in _PREPAID:
        raise SimError(
            400, "reservation_end_time is only accepted for prepaid clusters", param="billing_type"
        )
    if start is not None and end is not None and _aware(end) <= _aware(start):
        raise SimError(
            400,
            "reservation_end_time must be after reservation_start_time",
            param="reservation_end_time",
        )


def _check_update(cluster: SimCluster, req: ClusterUpdateRequest) -> None:
    """What an update may change of a reservation and a capacity pool (the SDK's update docs):
    reserved GPUs only on a RESERVED cluster, pool GPUs only on a pool's cluster, a multiple of 8
    and at most num_gpus, and an end only on a prepaid cluster, never before the current one."""
    spec = cluster.spec
    if req.num_reserved_gpus is not None:
        if spec.billing_type != "RESERVED":
            raise SimError(
                400,
                "num_reserved_gpus is only applicable for clusters with RESERVED billing type",
                param="num_reserved_gpus",
            )
        _check_count("num_reserved_gpus", req.num_reserved_gpus, minimum=0)
    if req.num_capacity_pool_gpus is not None:
        num_gpus = req.num_gpus if req.num_gpus is not None else spec.num_gpus
        pool = req.num_capacity_pool_gpus
        if spec.capacity_pool_id is None or pool % GPUS_PER_NODE or pool > num_gpus:
            raise SimError(
                400,
                "num_capacity_pool_gpus is only valid for clusters created with a "
                "capacity_pool_id, and must be a multiple of 8 and <= num_gpus",
                param="num_capacity_pool_gpus",
            )
    end = req.reservation_end_time
    if end is not None:
        if spec.billing_type not in _PREPAID:
            raise SimError(
                400,
                "reservation_end_time is only accepted for prepaid clusters",
                param="reservation_end_time",
            )
        current = reservation_end(cluster)
        if current is not None and _aware(end) < _aware(current):
            raise SimError(
                400,
                f"reservation_end_time {end.isoformat()} is before the reservation's current "
                f"end {current.isoformat()}; a reservation can only be extended",
                param="reservation_end_time",
            )


def _aware(when: datetime) -> datetime:
    """A time without an offset is read as UTC, as Together's gateway reads it."""
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def _check_volumes(world: Operated, req: ClusterCreateRequest) -> None:
    """Everything about the create's volume is checked before the cluster exists."""
    if req.volume_id and req.shared_volume is not None:
        raise SimError(
            400,
            "set either volume_id (an existing volume) or shared_volume (a new one), not both",
            param="volume_id",
        )
    if req.volume_id:
        world.volumes.check_attachable(req.volume_id, req.region)
    if req.shared_volume is not None:
        check_same_region(req.shared_volume.region, req.region, param="shared_volume.region")
        world.volumes.check_create(req.shared_volume)


def lowers(cluster: SimCluster, req: ClusterUpdateRequest) -> bool:
    """Whether the PUT lowers a count, the only change that removes nodes: only then do the
    targeted scale-down marks matter (the simulator asks the cluster's API server for them)."""
    return (req.num_gpus is not None and req.num_gpus < cluster.spec.num_gpus) or (
        req.num_preemptible_gpus is not None
        and req.num_preemptible_gpus < cluster.preemptible_target
    )


def update_cluster(
    world: Operated,
    cluster_id: str,
    req: ClusterUpdateRequest,
    marked: Collection[str] = frozenset(),
) -> SimCluster:
    """Apply a PUT: only fields that are set change; everything is checked before anything.
    ``marked``: the node ids Kubernetes shows marked for targeted scale-down (removed first)."""
    cluster = world.get(cluster_id)
    if cluster.status == ClusterStatus.DELETING:
        raise SimError(400, f"cluster {cluster_id} is being deleted and cannot be updated")
    spec = cluster.spec
    cluster_type = req.cluster_type or spec.cluster_type or "KUBERNETES"
    target = (
        req.num_preemptible_gpus
        if req.num_preemptible_gpus is not None
        else cluster.preemptible_target
    )
    if req.num_gpus is not None:
        _check_count("num_gpus", req.num_gpus, minimum=GPUS_PER_NODE)
    _check_preemptible(target, cluster_type)
    _check_update(cluster, req)
    merged = [_merge_add_on(spec.add_ons or [], add_on) for add_on in req.add_ons or []]
    if req.num_gpus is not None and req.num_gpus != spec.num_gpus:
        world.scale_standard(cluster, req.num_gpus, marked)
    if target != cluster.preemptible_target:
        world.set_preemptible_target(cluster, target, marked)
    cluster.spec = updated(cluster.spec, req, skip=_NOT_A_COPY)
    if merged:
        cluster.spec.add_ons = _with(spec.add_ons or [], merged)
    return cluster


_NOT_A_COPY: Final = frozenset({"num_gpus", "num_preemptible_gpus", "add_ons"})
"""PUT fields that are more than a copy: counts move nodes, an add-on's config is merged."""


def _merge_add_on(existing: list[AddOnRequest], update: AddOnRequest) -> AddOnRequest:
    """The existing add-on of that name with ``update``'s config keys laid over its own."""
    for add_on in existing:
        if add_on.name == update.name:
            config = {
                **(add_on.config.model_dump(exclude_none=True) if add_on.config else {}),
                **(update.config.model_dump(exclude_none=True) if update.config else {}),
            }
            return add_on.model_copy(update={"config": AddOnConfig.model_validate(config)})
    raise SimError(400, f"add-on {update.name!r} does not exist on this cluster", param="add_ons")


def _with(existing: list[AddOnRequest], merged: list[AddOnRequest]) -> list[AddOnRequest]:
    by_name = {a.name: a for a in merged}
    return [by_name.get(a.name, a) for a in existing]
