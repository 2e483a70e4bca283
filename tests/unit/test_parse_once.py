"""Each hook parses each property set it is handed once, on both hosts: the host crosses into the
core with typed values (`Schema.resolve`, `Schema.stored`) and nothing below parses them again."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
from pulumi.provider.experimental.provider import (
    CheckRequest,
    CreateRequest,
    DiffRequest,
    UpdateRequest,
)
from pytest_mock import MockerFixture

from tests.fake_api import CLUSTERS, ONE, SPEC, FakeApi, cluster, reply
from together_api import client as client_module
from together_api.client import TogetherClient
from together_provider.framework.schema import Schema
from together_provider.hosts.native import _properties
from together_provider.hosts.native.provider import TogetherProvider
from together_provider.registry import CLUSTER, ClusterProvider

Props = dict[str, Any]
URN = f"urn:pulumi:dev::proj::{CLUSTER.token}::train"
OUTPUTS: Props = {**SPEC, "cluster_id": "c-1", "status": "Ready", "kube_config": "x"}
TARGET: Props = {**SPEC, "num_preemptible_gpus": 24.0}


class Dynamic:
    """The dynamic host's hooks, as `pulumi.dynamic` calls them."""

    def __init__(self) -> None:
        self.provider = ClusterProvider()

    def check(self, olds: Props, news: Props) -> None:
        assert not self.provider.check(olds, news).failures

    def diff(self, olds: Props, news: Props) -> None:
        self.provider.diff("c-1", olds, news)

    def create(self, props: Props) -> None:
        self.provider.create(props)

    def update(self, olds: Props, news: Props) -> None:
        self.provider.update("c-1", olds, news)


class Native:
    """The native plugin's hooks, with the protocol's values."""

    def __init__(self) -> None:
        self.provider = TogetherProvider(ThreadPoolExecutor(max_workers=1))

    def check(self, olds: Props, news: Props) -> None:
        request = CheckRequest(URN, _properties.to_values(olds), _properties.to_values(news), b"")
        assert not asyncio.run(self.provider.check(request)).failures

    def diff(self, olds: Props, news: Props) -> None:
        values = _properties.to_values
        asyncio.run(self.provider.diff(DiffRequest(URN, "c-1", values(olds), values(news), [])))

    def create(self, props: Props) -> None:
        request = CreateRequest(URN, _properties.to_values(props), 0.0, False)
        asyncio.run(self.provider.create(request))

    def update(self, olds: Props, news: Props) -> None:
        values = _properties.to_values
        request = UpdateRequest(URN, "c-1", values(olds), values(news), 0.0, [], False)
        asyncio.run(self.provider.update(request))


Host = Dynamic | Native


@pytest.fixture(params=[Dynamic, Native], ids=["dynamic", "native"])
def host(request: pytest.FixtureRequest) -> Host:
    made: Host = request.param()
    return made


@pytest.fixture
def api(mocker: MockerFixture) -> FakeApi:
    fake = FakeApi()

    def client(**options: Any) -> TogetherClient:
        options.update(api_key="k", transport=httpx.MockTransport(fake), sleep=lambda _: None)
        return TogetherClient(**options)

    mocker.patch.object(client_module, "TogetherClient", side_effect=client)
    return fake


@pytest.fixture
def parses(mocker: MockerFixture) -> Callable[[], int]:
    """How many times `Schema.parse` (under `resolve`, `stored`, check and diff) has run."""
    spy = mocker.spy(Schema, "parse")
    return lambda: spy.call_count


def test_check_parses_the_new_inputs_once_and_the_old_ones_once(
    host: Host, parses: Callable[[], int]
) -> None:
    host.check({}, dict(SPEC))
    assert parses() == 1  # a create: no old inputs
    host.check(dict(SPEC), dict(TARGET))
    assert parses() == 1 + 2


def test_diff_parses_the_old_state_once_and_the_new_inputs_once(
    host: Host, parses: Callable[[], int]
) -> None:
    host.diff(dict(OUTPUTS), dict(TARGET))
    assert parses() == 2


def test_create_parses_its_inputs_once(host: Host, api: FakeApi, parses: Callable[[], int]) -> None:
    api.on("GET", CLUSTERS, reply(200, {"clusters": []}))
    api.on("POST", CLUSTERS, reply(200, cluster()))
    host.create(dict(SPEC))
    assert ("POST", CLUSTERS) in api.seen
    assert parses() == 1


def test_adoption_parses_its_inputs_once(
    host: Host, api: FakeApi, parses: Callable[[], int]
) -> None:
    """Adoption asks the rules as an update from the live counts does, without parsing the
    spec again: the live side is the spec with the live counts read in (`live_draft`)."""
    api.on("GET", ONE, reply(200, cluster(num_gpus=8, desired_preemptible_gpus=8)))
    api.on("PUT", ONE, reply(200, cluster()))
    host.create({**SPEC, "adopt_cluster_id": "c-1"})
    assert api.seen.count(("PUT", ONE)) == 1
    assert parses() == 1


def test_update_parses_the_old_state_once_and_the_new_inputs_once(
    host: Host, api: FakeApi, parses: Callable[[], int]
) -> None:
    api.on("PUT", ONE, reply(200, cluster(desired_preemptible_gpus=24)))
    host.update(dict(OUTPUTS), dict(TARGET))
    assert api.seen == [("PUT", ONE)]
    assert parses() == 2
