"""Synchronous client for Together's GPU clusters API: one method per endpoint (clusters, regions,
shared volumes) over the private transport, with the waiters mixed in so polls share its retries."""

from __future__ import annotations

import time
from typing import Any, Final

import httpx

from together_api._transport import RETRYABLE_STATUSES, Transport
from together_api.retry import Clock, RetryPolicy, Sleep
from together_api.waiters import Waiters
from together_api.wire import (
    Cluster,
    ClusterCreateRequest,
    ClusterList,
    ClusterUpdateRequest,
    Region,
    RegionList,
    SharedVolume,
    VolumeCreateRequest,
    VolumeDeleteResponse,
    VolumeList,
    VolumeUpdateRequest,
)
from together_facts.errors import TogetherError, VolumeInUseError
from together_facts.hints import FixHints

__all__ = ["RETRYABLE_STATUSES", "TogetherClient"]

_VOLUMES: Final = "/compute/clusters/storage/volumes"


class TogetherClient(Waiters):
    """Talks to ``/compute/clusters``, ``/compute/regions`` and the shared-volume endpoints.

    ``sleep`` and ``clock`` are used both between retries and by the waiters,
    so tests drive every timing path with a fake clock and no real sleeping.
    ``requests_made`` counts HTTP requests actually sent, retries included.
    ``hints`` words the fixes for the caller's user (:class:`FixHints`: where the key and the
    base URL are set); the default names no caller. The API key is absent from ``repr``, logs
    and exception text (the transport redacts server echoes).
    """

    def __init__(
        self,
        api_key: str | None = None,
        base_url: str | None = None,
        *,
        timeout: float = 30.0,
        retry: RetryPolicy | None = None,
        transport: httpx.BaseTransport | None = None,
        sleep: Sleep = time.sleep,
        clock: Clock = time.monotonic,
        hints: FixHints | None = None,
    ) -> None:
        self._transport = Transport(
            api_key,
            base_url,
            timeout=timeout,
            retry=retry,
            transport=transport,
            sleep=sleep,
            clock=clock,
            hints=hints or FixHints(),
        )
        self.base_url = self._transport.base_url
        self.retry = self._transport.retry

    @property
    def requests_made(self) -> int:
        """HTTP requests actually sent, retries included."""
        return self._transport.requests_made

    def __repr__(self) -> str:
        return f"TogetherClient(base_url={self.base_url!r})"

    def sleep(self, seconds: float) -> None:
        """Wait on the client's own clock (fake in tests), e.g. between a caller's retries."""
        self._transport.sleep(seconds)

    def clock(self) -> float:
        """Now, on the clock the retry deadlines and waiters use."""
        return self._transport.clock()

    def close(self) -> None:
        self._transport.close()

    def __enter__(self) -> TogetherClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _request(self, method: str, path: str, **options: Any) -> Any:
        return self._transport.request(method, path, **options)

    # ------------------------------------------------------------------ endpoints

    def create_cluster(self, request: ClusterCreateRequest) -> Cluster:
        """Create a cluster; returns at once, usually still provisioning."""
        body = self._request("POST", "/compute/clusters", json=request.to_json())
        return self._transport.parse(Cluster, body)

    def get_cluster(self, cluster_id: str) -> Cluster:
        """Fetch one cluster; :class:`NotFoundError` when it does not exist (any more)."""
        return self._transport.parse(
            Cluster, self._request("GET", f"/compute/clusters/{cluster_id}")
        )

    def update_cluster(self, cluster_id: str, request: ClusterUpdateRequest) -> Cluster:
        """PUT only the fields set on ``request``; omitted fields keep their value."""
        body = self._request("PUT", f"/compute/clusters/{cluster_id}", json=request.to_json())
        return self._transport.parse(Cluster, body)

    def list_clusters(self, project_id: str | None = None) -> list[Cluster]:
        params = {"projectId": project_id} if project_id else None
        body = self._request("GET", "/compute/clusters", params=params)
        return self._transport.parse(ClusterList, body).clusters

    def delete_cluster(self, cluster_id: str) -> None:
        """Start deletion; :class:`NotFoundError` on 404 (the caller decides if that is fine)."""
        self._request("DELETE", f"/compute/clusters/{cluster_id}")

    def list_regions(self) -> list[Region]:
        return self._transport.parse(RegionList, self._request("GET", "/compute/regions")).regions

    # ------------------------------------------------------------ shared volumes

    def create_volume(self, request: VolumeCreateRequest) -> SharedVolume:
        """Create a shared volume; it starts ``provisioning`` (see
        :meth:`wait_until_volume_available`)."""
        body = self._request("POST", _VOLUMES, json=request.to_json())
        return self._transport.parse(SharedVolume, body)

    def get_volume(self, volume_id: str) -> SharedVolume:
        """One volume; :class:`NotFoundError` when it does not exist (any more)."""
        return self._transport.parse(SharedVolume, self._request("GET", f"{_VOLUMES}/{volume_id}"))

    def list_volumes(self, project_id: str | None = None) -> list[SharedVolume]:
        params = {"projectId": project_id} if project_id else None
        return self._transport.parse(
            VolumeList, self._request("GET", _VOLUMES, params=params)
        ).volumes

    def resize_volume(self, volume_id: str, size_tib: int) -> SharedVolume:
        """Grow a volume to ``size_tib`` whole TiB (the id goes in the body, not the path)."""
        request = VolumeUpdateRequest(volume_id=volume_id, size_tib=size_tib)
        return self._transport.parse(
            SharedVolume, self._request("PUT", _VOLUMES, json=request.to_json())
        )

    def delete_volume(self, volume_id: str) -> None:
        """Delete a volume: :class:`VolumeInUseError` while a cluster uses it,
        :class:`NotFoundError` when it is already gone (the caller decides if that is fine)."""
        # A 409 here means "attached", not "out of stock".
        body = self._request("DELETE", f"{_VOLUMES}/{volume_id}", conflict=VolumeInUseError)
        if not self._transport.parse(VolumeDeleteResponse, body).success:
            raise TogetherError(f"DELETE {_VOLUMES}/{volume_id}: Together answered success=false")

    def clusters_using_volume(self, volume_id: str, project_id: str | None = None) -> list[Cluster]:
        """The clusters whose ``volumes`` name ``volume_id``: the volume object does not say."""
        return [
            cluster
            for cluster in self.list_clusters(project_id)
            if any(v.volume_id == volume_id for v in cluster.volumes)
        ]
