"""The simulator and our client against Together's official SDK types.

The SDK (``together`` 3.1.1) is generated from Together's OpenAPI spec, so:
every simulator response body must validate against the SDK's own pydantic
response models, and every body our client sends may only use keys the SDK's
request TypedDicts define.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, get_args

import httpx
import pytest
import together
from together.types import cluster as sdk_cluster
from together.types import cluster_create_params, cluster_update_params
from together.types.cluster_delete_response import ClusterDeleteResponse
from together.types.cluster_list_regions_response import ClusterListRegionsResponse
from together.types.cluster_list_response import ClusterListResponse

from testkit.sim import SimulatorProcess
from tests.specs import LEGACY_DRIVER, ON_DEMAND_CREATE, RESERVED_CREATE
from together_api import wire
from together_api.client import TogetherClient
from together_api.retry import RetryPolicy
from together_api.wire import ClusterCreateRequest, ClusterUpdateRequest
from together_facts import values
from together_facts.errors import ApiConnectionError, ServerError

CREATE_VARIANTS = (
    cluster_create_params.GPUClusterCreateRequestNvidiaVersion,
    cluster_create_params.GPUClusterCreateRequestLegacyNvidia,
)
UPDATE = cluster_update_params.ClusterUpdateParams


@pytest.fixture
def sdk(sim: SimulatorProcess) -> Iterator[together.Together]:
    client = together.Together(api_key=sim.api_key, base_url=sim.root_url, max_retries=0)
    yield client
    client.close()


def test_enums_match_the_sdk() -> None:
    fields = sdk_cluster.Cluster.model_fields
    assert set(values.GPU_TYPES) == set(get_args(fields["gpu_type"].annotation))
    assert set(values.BILLING_TYPES) == set(
        get_args(sdk_cluster.Cluster.model_fields["billing_type"].annotation)
    )
    assert set(values.CLUSTER_TYPES) == set(
        get_args(sdk_cluster.Cluster.model_fields["cluster_type"].annotation)
    )
    known = set(get_args(sdk_cluster.Cluster.model_fields["status"].annotation))
    constants = {
        v for k, v in vars(wire.ClusterStatus).items() if k.isupper() and isinstance(v, str)
    }
    assert constants == known


def test_request_models_use_only_sdk_keys() -> None:
    create_keys = set().union(*(v.__annotations__ for v in CREATE_VARIANTS))
    assert set(ClusterCreateRequest.model_fields) <= create_keys
    assert set(ClusterUpdateRequest.model_fields) <= set(UPDATE.__annotations__)


def test_sdk_round_trip_and_every_body_validates(
    sim: SimulatorProcess, sdk: together.Together
) -> None:
    regions = sdk.clusters.with_raw_response.list_regions()
    parsed = ClusterListRegionsResponse.model_validate(regions.http_response.json())
    central = next(r for r in parsed.regions if r.name == "us-central-8")

    created = sdk.clusters.with_raw_response.create(
        cluster_name="conformance",
        **ON_DEMAND_CREATE,
        nvidia_version_id=central.driver_versions[0].id,
        num_preemptible_gpus=16,
        project_id="proj-1",
    )
    cluster = sdk_cluster.Cluster.model_validate(created.http_response.json())
    assert cluster.status == "WaitingForControlPlaneNodes"

    sim.advance(360 + 120)
    sim.reclaim(cluster.cluster_id, 1)
    got = sdk.clusters.with_raw_response.retrieve(cluster.cluster_id)
    ready = sdk_cluster.Cluster.model_validate(got.http_response.json())
    assert ready.status == "Ready" and ready.allocated_preemptible_gpus == 16
    assert (
        ready.node_lifecycle_events
        and ready.node_lifecycle_events[-1].reason == "TogetherPreemptionNotified"
    )
    sim.advance(300)
    after = sdk_cluster.Cluster.model_validate(
        sdk.clusters.with_raw_response.retrieve(cluster.cluster_id).http_response.json()
    )
    assert (
        after.deleted_gpu_worker_nodes and after.deleted_gpu_worker_nodes[0].deleted_at is not None
    )

    updated = sdk.clusters.with_raw_response.update(
        cluster.cluster_id, num_gpus=16, num_preemptible_gpus=8
    )
    assert sdk_cluster.Cluster.model_validate(updated.http_response.json()).num_gpus == 16

    listed = sdk.clusters.with_raw_response.list(project_id="proj-1")
    clusters = ClusterListResponse.model_validate(listed.http_response.json()).clusters
    assert [c.cluster_id for c in clusters] == [cluster.cluster_id]

    deleted = sdk.clusters.with_raw_response.delete(cluster.cluster_id)
    assert (
        ClusterDeleteResponse.model_validate(deleted.http_response.json()).cluster_id
        == cluster.cluster_id
    )
    deleting = sdk.clusters.with_raw_response.retrieve(cluster.cluster_id)
    assert sdk_cluster.Cluster.model_validate(deleting.http_response.json()).status == "Deleting"
    sim.advance(60)
    with pytest.raises(together.NotFoundError):
        sdk.clusters.retrieve(cluster.cluster_id)


def test_sdk_sees_out_of_stock_as_409(sim: SimulatorProcess, sdk: together.Together) -> None:
    sim.set_capacity("us-west-2", "B200_SXM", standard_gpus=8)
    with pytest.raises(together.ConflictError):
        big: dict[str, Any] = {
            **ON_DEMAND_CREATE,
            "region": "us-west-2",
            "gpu_type": "B200_SXM",
            "num_gpus": 16,
        }
        sdk.clusters.create(cluster_name="big", **big, **LEGACY_DRIVER)


class Recorder(httpx.HTTPTransport):
    """A real transport that remembers every request body it sends."""

    def __init__(self) -> None:
        super().__init__()
        self.bodies: list[tuple[str, dict[str, Any]]] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if request.content:
            self.bodies.append((request.method, json.loads(request.content)))
        return super().handle_request(request)


def test_client_requests_use_only_sdk_keys_and_drive_a_lifecycle(sim: SimulatorProcess) -> None:
    recorder = Recorder()
    with TogetherClient(
        sim.api_key,
        sim.base_url,
        transport=recorder,
        retry=RetryPolicy(),
        sleep=sim.advance,  # waiting moves simulated time, not real time
    ) as client:
        created = client.create_cluster(
            ClusterCreateRequest(
                cluster_name="client",
                **RESERVED_CREATE,
                cluster_type="KUBERNETES",
                num_preemptible_gpus=8,
                project_id="proj-2",
            )
        )
        statuses: list[str] = []
        ready = client.wait_until_ready(
            created.cluster_id, timeout=3600, on_status=lambda c: statuses.append(c.status)
        )
        assert (
            ready.is_ready
            and statuses[0] == "WaitingForControlPlaneNodes"
            and statuses[-1] == "Ready"
        )
        client.update_cluster(
            created.cluster_id, ClusterUpdateRequest(num_preemptible_gpus=0, num_gpus=16)
        )
        client.delete_cluster(created.cluster_id)
        client.wait_until_deleted(created.cluster_id, timeout=600)

    create_keys = set().union(*(v.__annotations__ for v in CREATE_VARIANTS))
    [(_, create_body), (_, update_body)] = recorder.bodies
    assert set(create_body) <= create_keys
    assert any(v.__required_keys__ <= set(create_body) for v in CREATE_VARIANTS)
    assert set(update_body) <= set(UPDATE.__annotations__)
    assert update_body == {"num_preemptible_gpus": 0, "num_gpus": 16}


def test_client_retries_injected_faults_and_the_log_counts_them(sim: SimulatorProcess) -> None:
    policy = RetryPolicy(attempts=3)
    with TogetherClient(sim.api_key, sim.base_url, retry=policy, sleep=sim.advance) as client:
        sim.reset_requests()
        sim.set_faults(error_rate=1.0, error_statuses=[503], retry_after=2)
        with pytest.raises(ServerError):
            client.list_regions()
        sim.set_faults(drop_rate=1.0)
        with pytest.raises(ApiConnectionError):
            client.list_regions()
        sim.clear_faults()
        assert client.list_regions()
        assert client.requests_made == 7
    assert sim.request_counts() == {
        ("GET", "/v1/compute/regions", 503): 3,
        ("GET", "/v1/compute/regions", 0): 3,
        ("GET", "/v1/compute/regions", 200): 1,
    }
