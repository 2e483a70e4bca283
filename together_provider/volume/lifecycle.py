"""The shared volume's orchestration, free of Pulumi, under the same contract as the cluster's
(`framework.lifecycle`), so both hosts create, grow, adopt and delete volumes alike."""

from __future__ import annotations

from contextlib import suppress

from together_api.poll import poll_until
from together_api.wire import Cluster, SharedVolume, VolumeCreateRequest
from together_facts.errors import (
    ClusterStateError,
    NotFoundError,
    SpecError,
    TogetherError,
    VolumeInUseError,
    VolumeNotAvailableError,
)
from together_provider.framework.lifecycle import (
    Applied,
    Observed,
    ResourceLifecycle,
)
from together_provider.framework.schema import Stored
from together_provider.volume import rules
from together_provider.volume.table import VOLUME, LiveVolume, VolumeSpec

__all__ = ["VolumeLifecycle"]


def _clusters_named(clusters: list[Cluster]) -> str:
    return ", ".join(f"{c.cluster_name!r} ({c.cluster_id}, {c.status})" for c in clusters)


class VolumeLifecycle(ResourceLifecycle):
    """One Together shared volume's lifecycle over a caller-owned client.

    An update is exactly one PUT of `size_tib` (a shrink never gets here: check rejects it); a
    read reads the size back, so an out-of-band resize shows as drift; `timeout_seconds` on
    create and delete overrides the input `ready_timeout_seconds`."""

    RULEBOOK = rules.RULEBOOK

    # ------------------------------------------------------------------ create

    def create(self, spec: VolumeSpec, *, timeout_seconds: float | None = None) -> Applied:
        """Adopt `adopt_volume_id` when set; else POST and wait until the volume is available."""
        props = VOLUME.to_props(spec)
        timeout = spec.ready_timeout_seconds if timeout_seconds is None else timeout_seconds
        if spec.adopt_volume_id is not None:
            live = self._adopt(spec, spec.adopt_volume_id, timeout)
        else:
            live = LiveVolume(self._provision(spec, timeout))
        return Applied(live.volume_id, {**props, **VOLUME.outputs_of(live)})

    def _provision(self, spec: VolumeSpec, timeout: float) -> SharedVolume:
        created = self._client.create_volume(
            VolumeCreateRequest.model_validate(VOLUME.request_body(spec))
        )
        self._say(f"volume {spec.volume_name!r}: created {created.volume_id} ({created.status})")
        try:
            return self._client.wait_until_volume_available(created.volume_id, timeout=timeout)
        except VolumeNotAvailableError as failure:
            if failure.timed_out:
                raise  # it may still finish: leave it for adoption rather than delete it blind
            self._say(f"volume {spec.volume_name!r}: {failure.message}; deleting it")
            with suppress(TogetherError):
                self._client.delete_volume(created.volume_id)
            raise VolumeNotAvailableError(
                f"volume {spec.volume_name!r}: {failure.message}; it was deleted so nothing is "
                "left billing",
                volume_id=created.volume_id,
                last_status=failure.last_status,
                fix=failure.fix,
            ) from failure

    def _adopt(self, spec: VolumeSpec, volume_id: str, timeout: float) -> LiveVolume:
        """Take over a volume created outside the stack; it must match, and may only grow."""
        live = self._to_adopt(spec, volume_id, self._live, "tg clusters storage list")
        volume = live.volume
        have = VOLUME.live_draft(spec, live)
        failures = self.RULEBOOK.failures(spec.volume_name, spec, have)
        if failures:
            raise SpecError(
                f"cannot adopt {volume_id} as specified: " + "; ".join(f.reason for f in failures),
                resource=spec.volume_name,
                field=failures[0].field,
                fix=f"adopt it with size_tib={volume.size_tib} (its live size)",
            )
        growth = self.RULEBOOK.plan_drafts(have, spec).update
        if growth:
            volume = self._client.resize_volume(volume_id, growth["size_tib"])
        if not volume.is_available:
            volume = self._client.wait_until_volume_available(volume_id, timeout=timeout)
        self._say(f"volume {spec.volume_name!r}: adopted {volume_id}")
        return LiveVolume(volume, live.clusters)

    # ------------------------------------------------------------------ update

    def update(
        self,
        id_: str,
        old: Stored[VolumeSpec],
        spec: VolumeSpec,
        *,
        timeout_seconds: float | None = None,
    ) -> Applied:
        """One PUT of the new size; nothing else of a volume changes in place. A resize is not
        waited for, so `timeout_seconds` (accepted as `ClusterLifecycle.update` does) is unused."""
        plan = self.RULEBOOK.plan_drafts(old.inputs, spec)
        inputs = VOLUME.to_props(spec)
        kept = old.outputs
        if not plan.update:
            return Applied(id_, {**kept, **inputs})
        volume = self._client.resize_volume(id_, plan.update["size_tib"])
        self._say(f"volume {spec.volume_name!r}: size_tib -> {volume.size_tib}")
        outputs = {**kept, **inputs, "volume_id": id_, "status": volume.status}
        return Applied(id_, outputs)

    def _live(self, volume_id: str, volume: SharedVolume | None = None) -> LiveVolume:
        """The volume (read now unless given) with the clusters that list it."""
        if volume is None:
            volume = self._client.get_volume(volume_id)
        return LiveVolume(volume, self._client.clusters_using_volume(volume_id))

    # ------------------------------------------------------------------ read / delete

    def read(self, id_: str, stored: Stored[VolumeSpec]) -> Observed | None:
        """The volume as Together sees it now; None when it is gone (404 or deleting)."""
        volume = self._still_there(self._client.get_volume, id_)
        if volume is None:
            return None
        live = self._live(id_, volume)
        inputs = VOLUME.live_inputs(stored.recorded, live)
        return Observed(id_, inputs, {**inputs, **VOLUME.outputs_of(live)})

    def delete(
        self, id_: str, stored: Stored[VolumeSpec], *, timeout_seconds: float | None = None
    ) -> None:
        """Refuse while a live cluster uses it; else DELETE and wait until Together answers 404,
        all within `delete_timeout` (as a cluster's delete).

        A cluster that is already Deleting releases the volume when it is gone, so that is
        waited for (within the timeout) instead of refused.
        """
        recorded_name = stored.inputs.volume_name
        name = recorded_name if isinstance(recorded_name, str) and recorded_name else id_
        client = self._client
        deadline = client.clock() + self.delete_timeout(stored, timeout_seconds)
        poll_until(
            lambda: client.clusters_using_volume(id_),
            lambda users: not users,
            subject=f"volume {name!r}",
            timeout=deadline - client.clock(),
            pace=client.pace,
            state=_clusters_named,
            failed=lambda users: _in_use(name, id_, [c for c in users if not c.is_deleting]),
            timed_out=lambda users: ClusterStateError(
                f"volume {name!r}: waiting for {users}, and the timeout ran out",
                fix="raise ready_timeout_seconds; Together may still finish in the background",
            ),
        )
        try:
            client.delete_volume(id_)
        except NotFoundError:
            return
        except VolumeInUseError as in_use:
            # A cluster attached it between the list and the DELETE: name it if it is visible.
            refusal = _in_use(name, id_, client.clusters_using_volume(id_))
            if refusal is not None:
                raise refusal from in_use
            raise
        self._say(f"volume {name!r}: deleting {id_}")
        remaining = max(0.0, deadline - client.clock())
        client.wait_until_volume_deleted(id_, timeout=remaining)


def _in_use(name: str, id_: str, users: list[Cluster]) -> VolumeInUseError | None:
    """The refusal to delete a volume these clusters use (None: no cluster does)."""
    if not users:
        return None
    clusters = ", ".join(repr(c.cluster_name) for c in users)
    return VolumeInUseError(
        f"volume {name!r} ({id_}) is attached to cluster {_clusters_named(users)}; Together "
        "refuses to delete a volume a cluster uses, so nothing was deleted",
        field="volume_id",
        fix=f"delete or replace cluster {clusters} first (or point it at another volume), "
        "then delete the volume",
    )
