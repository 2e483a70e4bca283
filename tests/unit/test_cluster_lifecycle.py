"""The Pulumi-free lifecycle against a scripted Together API: what any provider host gets."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from tests.fake_api import CLUSTERS, ONE, SPEC, FakeApi, client_for, cluster, reply
from together_facts.errors import ServerError, SpecError, TogetherError
from together_provider.cluster.lifecycle import ClusterLifecycle
from together_provider.cluster.table import CLUSTER, ClusterSpec

NONE: dict[str, list[object]] = {"clusters": []}
BOOM = {"error": {"message": "bad gateway"}}


def lifecycle(api: FakeApi, said: list[str] | None = None) -> ClusterLifecycle:
    return ClusterLifecycle(client_for(api), (said if said is not None else []).append)


def resolved(props: dict[str, Any]) -> ClusterSpec:
    """What a host hands the lifecycle: the engine's properties, resolved once."""
    return CLUSTER.resolve(props)


def test_a_create_whose_post_failed_is_retried_after_the_name_check_finds_nothing() -> None:
    api = FakeApi()
    api.on("GET", CLUSTERS, reply(200, NONE))
    api.on("POST", CLUSTERS, reply(502, BOOM), reply(503, BOOM), reply(200, cluster()))
    api.on("GET", ONE, reply(200, cluster()))
    applied = lifecycle(api).create(resolved(SPEC))
    assert applied.id == "c-1"
    posts = [i for i, seen in enumerate(api.seen) if seen == ("POST", CLUSTERS)]
    assert len(posts) == 3
    for earlier, later in itertools.pairwise(posts):  # a name check before every retry
        assert ("GET", CLUSTERS) in api.seen[earlier + 1 : later]


def test_a_cluster_that_appears_after_a_502_is_taken_not_created_again() -> None:
    api = FakeApi()
    late = reply(200, {"clusters": [cluster()]})
    api.on("GET", CLUSTERS, reply(200, NONE), reply(200, NONE), late)
    api.on("POST", CLUSTERS, reply(502, BOOM))
    api.on("GET", ONE, reply(200, cluster()))
    applied = lifecycle(api).create(resolved(SPEC))
    assert applied.id == "c-1"
    assert api.seen.count(("POST", CLUSTERS)) == 2


def test_create_retries_are_bounded_by_the_client_policy() -> None:
    # A round of `attempts` POSTs, made again like a lost poll up to `poll_failures` times.
    api = FakeApi()
    api.on("GET", CLUSTERS, reply(200, NONE))
    api.on("POST", CLUSTERS, reply(500, BOOM))
    life = lifecycle(api)
    with pytest.raises(ServerError, match="HTTP 500"):
        life.create(resolved(SPEC))
    policy = life._client.retry
    assert api.seen.count(("POST", CLUSTERS)) == policy.attempts * (1 + policy.poll_failures)
    posts = [i for i, seen in enumerate(api.seen) if seen == ("POST", CLUSTERS)]
    for earlier, later in itertools.pairwise(posts):  # rounds too: a name check before each
        assert ("GET", CLUSTERS) in api.seen[earlier + 1 : later]


def test_a_create_outlasts_a_name_lookup_lost_after_its_retries() -> None:
    # The duplicate guard's list fails a whole retry policy, then answers: the create goes on
    # (issue 12's goal: a fault costs a pause, not an `up`).
    api = FakeApi()
    life = lifecycle(api)
    lost = [reply(503, BOOM)] * life._client.retry.attempts
    api.on("GET", CLUSTERS, *lost, reply(200, NONE))
    api.on("POST", CLUSTERS, reply(200, cluster()))
    api.on("GET", ONE, reply(200, cluster()))
    assert life.create(resolved(SPEC)).id == "c-1"
    assert api.seen.count(("POST", CLUSTERS)) == 1


def test_a_name_lookup_that_stays_lost_fails_the_create_before_any_post() -> None:
    api = FakeApi()
    api.on("GET", CLUSTERS, reply(503, BOOM))
    life = lifecycle(api)
    with pytest.raises(ServerError, match="HTTP 503"):
        life.create(resolved(SPEC))
    policy = life._client.retry
    assert api.seen == [("GET", CLUSTERS)] * (policy.attempts * (1 + policy.poll_failures))


def test_a_create_round_whose_lookup_was_lost_begins_the_next_with_a_lookup() -> None:
    # POST 502, then the lookup before its retry is lost for a whole policy: the next round
    # looks again and finds the cluster the first POST made, never posting a second.
    api = FakeApi()
    life = lifecycle(api)
    lost = [reply(503, BOOM)] * life._client.retry.attempts
    api.on("GET", CLUSTERS, reply(200, NONE), *lost, reply(200, {"clusters": [cluster()]}))
    api.on("POST", CLUSTERS, reply(502, BOOM))
    api.on("GET", ONE, reply(200, cluster()))
    said: list[str] = []
    assert ClusterLifecycle(client_for(api), said.append).create(resolved(SPEC)).id == "c-1"
    assert api.seen.count(("POST", CLUSTERS)) == 1
    assert any("the create answer was lost" in line for line in said)


def test_create_ints_come_back_as_ints_and_the_host_timeout_wins() -> None:
    api = FakeApi()
    api.on("GET", CLUSTERS, reply(200, NONE))
    api.on("POST", CLUSTERS, reply(200, cluster("Queued")))
    api.on("GET", ONE, reply(200, cluster("Queued")))
    with pytest.raises(Exception, match="not Ready in time"):
        lifecycle(api).create(resolved({**SPEC, "ready_timeout_seconds": 1e9}), timeout_seconds=0.0)
    api = FakeApi()
    api.on("GET", CLUSTERS, reply(200, NONE))
    api.on("POST", CLUSTERS, reply(200, cluster()))
    outputs = lifecycle(api).create(resolved(SPEC)).outputs
    assert type(outputs["num_gpus"]) is int and type(outputs["num_preemptible_gpus"]) is int


ADOPT = {**SPEC, "adopt_cluster_id": "c-1"}


def test_adoption_that_would_convert_compute_classes_is_refused_before_any_put() -> None:
    api = FakeApi()
    # Live: 16 standard, target 8. The spec asks 8 standard, target 16: a class conversion.
    api.on("GET", ONE, reply(200, cluster(num_gpus=16, desired_preemptible_gpus=8)))
    with pytest.raises(SpecError, match="converts standard nodes to preemptible") as info:
        lifecycle(api).create(resolved(ADOPT))
    assert info.value.field == "num_gpus"
    assert "num_gpus=16, num_preemptible_gpus=8" in str(info.value)  # the safe first step
    assert [method for method, _ in api.seen] == ["GET"]


def test_adoption_puts_only_what_the_rules_plan() -> None:
    api = FakeApi()
    api.on("GET", ONE, reply(200, cluster(num_gpus=8, desired_preemptible_gpus=8)))
    api.on("PUT", ONE, reply(200, cluster(desired_preemptible_gpus=16)))
    said: list[str] = []
    applied = lifecycle(api, said).create(resolved(ADOPT))
    assert applied.id == "c-1"
    assert api.seen.count(("PUT", ONE)) == 1
    assert any("adopted c-1" in line for line in said)


def test_adoption_refuses_a_cluster_whose_identity_differs() -> None:
    api = FakeApi()
    api.on("GET", ONE, reply(200, cluster(gpu_type="H200_SXM")))
    with pytest.raises(SpecError, match="gpu_type: cluster has 'H200_SXM', spec has 'H100_SXM'"):
        lifecycle(api).create(resolved(ADOPT))
    assert ("PUT", ONE) not in api.seen


def test_a_kube_config_that_does_not_decode_keeps_the_new_cluster_in_the_state() -> None:
    api = FakeApi()
    api.on("GET", CLUSTERS, reply(200, NONE))
    api.on("POST", CLUSTERS, reply(200, cluster(kube_config="%%%")))
    api.on("GET", ONE, reply(200, cluster(kube_config="%%%")))
    said: list[str] = []
    applied = lifecycle(api, said).create(resolved(SPEC))
    assert applied.id == "c-1" and applied.outputs["kube_config"] == ""
    assert not any(method == "DELETE" for method, _ in api.seen)
    assert any("kube_config" in line and "get-credentials c-1" in line for line in said)


def test_a_refused_name_lookup_is_not_made_again() -> None:
    # A 401 is no fault to outlast: one request, and the create fails with it.
    api = FakeApi()
    api.on("GET", CLUSTERS, reply(401, {"error": {"message": "missing or invalid API key"}}))
    with pytest.raises(TogetherError, match="HTTP 401"):
        lifecycle(api).create(resolved(SPEC))
    assert api.seen == [("GET", CLUSTERS)]
