"""The whole cluster Together offers (issue 49): every create field of the pinned SDK is an
input, the update request's fields change in place with a PUT of only what changed, every other
field replaces, and check refuses what Together refuses, with no API call."""

from __future__ import annotations

from typing import Any

import pytest
from together.types import cluster_create_params, cluster_update_params
from together.types.clusters import storage_create_params

from tests.fake_api import ONE, SPEC, FakeApi, client_for, cluster, reply
from tests.sim_app import Sim
from together_provider.cluster import mapping
from together_provider.cluster.lifecycle import ClusterLifecycle
from together_provider.cluster.rules import RULEBOOK
from together_provider.cluster.table import CLUSTER
from together_provider.framework.schema import UNKNOWN, Policy
from together_provider.volume.table import VOLUME

NOT_AN_INPUT = {"shared_volume"}
"""Create fields that are another resource: a new volume is a `SharedVolume` (its `volume_id`)."""

DASHBOARD: dict[str, Any] = {
    "name": "dash",
    "add_on_type": "dashboard",
    "config": {"dashboard": {"enabled": False}},
}
INGRESS: dict[str, Any] = {"name": "edge", "add_on_type": "ingress"}
RESERVED: dict[str, Any] = {
    **SPEC,
    "num_preemptible_gpus": 0.0,
    "billing_type": "RESERVED",
    "duration_days": 30.0,
    "num_reserved_gpus": 8.0,
    "reservation_end_time": "2027-01-31T00:00:00Z",
    "cluster_config": {"load_balancer": "NONE", "observability": {"enabled": False}},
    "add_ons": [DASHBOARD, INGRESS],
}


def _sdk_fields(typed_dict: Any) -> set[str]:
    return set(typed_dict.__annotations__)


@pytest.mark.parametrize(
    "variant",
    [
        cluster_create_params.GPUClusterCreateRequestNvidiaVersion,
        cluster_create_params.GPUClusterCreateRequestLegacyNvidia,
    ],
)
def test_every_create_field_of_the_sdk_is_a_cluster_input(variant: Any) -> None:
    assert _sdk_fields(variant) - NOT_AN_INPUT <= set(CLUSTER.input_names)


def test_every_storage_create_field_is_a_shared_volume_input() -> None:
    assert _sdk_fields(storage_create_params.StorageCreateParams) <= set(VOLUME.input_names)


def test_what_updates_in_place_is_the_update_request_and_the_rest_replaces() -> None:
    update = _sdk_fields(cluster_update_params.ClusterUpdateParams) - {"cluster_type"}
    wired = {f.name: f.policy for f in CLUSTER.inputs if f.wire is not None}
    create = _sdk_fields(cluster_create_params.GPUClusterCreateRequestNvidiaVersion)
    for name in create - NOT_AN_INPUT:
        want = Policy.IN_PLACE if name in update else Policy.REPLACE
        assert wired[name] is want, name


def test_stack_config_keys_are_camel_case_of_the_sdk_names() -> None:
    keys = CLUSTER.config_keys
    assert keys["reservationEndTime"] == "reservation_end_time"
    assert keys["clusterConfig"] == "cluster_config"
    assert keys["numCapacityPoolGpus"] == "num_capacity_pool_gpus"


# --- diff: one update of the changed input, a PUT of it alone -----------------------------------


@pytest.mark.parametrize(
    ("change", "put"),
    [
        (
            {"reservation_end_time": "2027-02-28T00:00:00+00:00"},
            {"reservation_end_time": "2027-02-28T00:00:00Z"},
        ),
        ({"num_reserved_gpus": 16.0}, {"num_reserved_gpus": 16}),
        (
            {"cluster_config": {"load_balancer": "NONE", "observability": {"enabled": True}}},
            {"cluster_config": {"load_balancer": "NONE", "observability": {"enabled": True}}},
        ),
        (
            {"add_ons": [{**DASHBOARD, "config": {"dashboard": {"enabled": True}}}, INGRESS]},
            {"add_ons": [{"name": "dash", "config": {"dashboard": {"enabled": True}}}]},
        ),
    ],
    ids=["reservation_end_time", "num_reserved_gpus", "cluster_config", "add_on_config"],
)
def test_an_in_place_change_is_one_update_of_that_field_alone(
    change: dict[str, Any], put: dict[str, Any]
) -> None:
    assert RULEBOOK.validate("train", RESERVED | change, RESERVED) == []
    plan = RULEBOOK.plan(RESERVED, RESERVED | change)
    assert plan.changed == tuple(change)
    assert plan.replaces == ()
    assert plan.update == put


def test_the_same_value_spelled_another_way_is_no_change() -> None:
    same = RESERVED | {"reservation_end_time": "2027-01-31T01:00:00+01:00"}
    assert not RULEBOOK.plan(RESERVED, same).has_changes


def test_the_same_add_ons_in_another_order_are_no_change() -> None:
    # Together names each add-on: a reordered list is no update (and no PUT of `add_ons: []`).
    assert not RULEBOOK.plan(RESERVED, RESERVED | {"add_ons": [INGRESS, DASHBOARD]}).has_changes


def test_a_capacity_pool_change_replaces_the_cluster() -> None:
    pooled = RESERVED | {"capacity_pool_id": "pool-a", "num_capacity_pool_gpus": 8.0}
    plan = RULEBOOK.plan(pooled, pooled | {"capacity_pool_id": "pool-b"})
    assert plan.replaces == ("capacity_pool_id",)
    assert plan.update == {}


def test_an_unknown_nested_value_is_an_unknown_field() -> None:
    config = {"load_balancer": UNKNOWN}
    plan = RULEBOOK.plan(RESERVED, RESERVED | {"cluster_config": config})
    assert plan.changed == ("cluster_config",)
    assert plan.update == {}  # nothing to send until it is known
    assert RULEBOOK.validate("train", RESERVED | {"cluster_config": config}, RESERVED) == []


def test_the_lifecycle_puts_only_the_changed_field() -> None:
    api = FakeApi()
    api.on("PUT", ONE, reply(200, cluster(reservation_end_time="2027-02-28T00:00:00Z")))
    said: list[str] = []
    life = ClusterLifecycle(client_for(api), said.append)
    new = CLUSTER.resolve(RESERVED | {"reservation_end_time": "2027-02-28T00:00:00Z"})
    applied = life.update("c-1", CLUSTER.stored(RESERVED), new)
    assert api.seen == [("PUT", ONE)]
    assert api.bodies == [{"reservation_end_time": "2027-02-28T00:00:00Z"}]
    assert applied.outputs["reservation_ends_at"] == "2027-02-28T00:00:00Z"


# --- check: refused with the valid values, before any call --------------------------------------


def _reasons(new: dict[str, Any], old: dict[str, Any] | None = None) -> list[str]:
    return [f.reason for f in RULEBOOK.validate("train", new, old)]


@pytest.mark.parametrize(
    ("new", "old", "words"),
    [
        (
            RESERVED | {"capacity_pool_id": "p", "num_capacity_pool_gpus": 12.0},
            None,
            "num_capacity_pool_gpus=12 is not a multiple of 8; Together nodes have 8 GPUs each "
            "(use 8 or 16)",
        ),
        (
            RESERVED | {"capacity_pool_id": "p", "num_capacity_pool_gpus": 16.0},
            None,
            "num_capacity_pool_gpus=16 is above num_gpus=8",
        ),
        (
            RESERVED | {"num_capacity_pool_gpus": 8.0},
            None,
            "num_capacity_pool_gpus=8 without capacity_pool_id",
        ),
        (
            RESERVED | {"reservation_start_time": "2027-02-01T00:00:00Z"},
            None,
            "reservation_end_time='2027-01-31T00:00:00Z' is not after reservation_start_time",
        ),
        (
            RESERVED | {"reservation_end_time": "2027-01-15T00:00:00Z"},
            RESERVED,
            "reservation_end_time 2027-01-31T00:00:00Z -> 2027-01-15T00:00:00Z shortens the "
            "running reservation; Together only extends one (set reservation_end_time to "
            "2027-01-31T00:00:00Z or later",
        ),
        (
            RESERVED | {"nvidia_version_id": "nv-1"},
            None,
            "nvidia_version_id='nv-1' with cuda_version='12.8', nvidia_driver_version='570'; "
            "name the driver one way",
        ),
        (
            {k: v for k, v in RESERVED.items() if k not in ("cuda_version",)},
            None,
            "cuda_version not set and no nvidia_version_id",
        ),
        (
            {k: v for k, v in RESERVED.items() if k not in ("nvidia_driver_version",)},
            None,
            "nvidia_driver_version not set and no nvidia_version_id",
        ),
        (
            SPEC | {"reservation_end_time": "2027-01-31T00:00:00Z"},
            None,
            "reservation_end_time='2027-01-31T00:00:00Z' with billing_type='ON_DEMAND'",
        ),
        (SPEC | {"num_reserved_gpus": 8.0}, None, "num_reserved_gpus=8 with billing_type="),
        (
            {k: v for k, v in RESERVED.items() if k != "reservation_end_time"},
            RESERVED,
            "reservation_end_time was '2027-01-31T00:00:00Z' and is now unset",
        ),
        (RESERVED | {"add_ons": [DASHBOARD]}, RESERVED, "adds, removes or retypes an add-on"),
        (
            RESERVED,
            {k: v for k, v in RESERVED.items() if k != "add_ons"},
            "add_ons [] -> [('dash', 'dashboard'), ('edge', 'ingress')] adds, removes or retypes "
            "an add-on",
        ),
        (
            RESERVED | {"cluster_config": {"observability": {"enabled": True}}},
            None,
            "cluster_config has no 'load_balancer'; Together requires load_balancer",
        ),
        (
            RESERVED | {"cluster_config": {"load_balancer": "NONE", "observabilty": {}}},
            None,
            "cluster_config has an unknown key 'observabilty'; did you mean 'observability'?",
        ),
        (
            RESERVED | {"add_ons": [DASHBOARD, {**DASHBOARD, "add_on_type": "ingress"}]},
            None,
            "add_ons has two entries with name='dash'",
        ),
        (
            RESERVED | {"reservation_end_time": "next month"},
            None,
            "reservation_end_time='next month' is not an ISO 8601 time",
        ),
    ],
    ids=[
        "pool-not-whole-nodes",
        "pool-over-num_gpus",
        "pool-without-pool",
        "end-before-start",
        "shortened",
        "driver-two-ways",
        "driver-without-cuda",
        "driver-without-driver-version",
        "end-on-demand",
        "reserved-on-demand",
        "unset-in-place",
        "add-on-removed",
        "add-on-added-to-none",
        "config-without-load-balancer",
        "config-typo",
        "add-on-twice",
        "not-a-time",
    ],
)
def test_check_refuses_what_together_refuses(
    new: dict[str, Any], old: dict[str, Any] | None, words: str
) -> None:
    reasons = _reasons(new, old)
    assert len(reasons) == 1, reasons
    assert reasons[0].startswith("cluster 'train': ")
    assert words in reasons[0]


def test_a_reservation_may_be_extended() -> None:
    assert _reasons(RESERVED | {"reservation_end_time": "2027-03-01T00:00:00Z"}, RESERVED) == []


def test_a_replacement_may_end_earlier() -> None:
    moved = RESERVED | {"region": "us-west-2", "reservation_end_time": "2027-01-10T00:00:00Z"}
    assert _reasons(moved, RESERVED) == []


# --- state: a cluster that sets none of the new fields ------------------------------------------

BEFORE_ISSUE_49 = {
    "allocated_preemptible_gpus",
    "auto_scale",
    "billing_type",
    "cluster_id",
    "cluster_name",
    "cluster_type",
    "control_plane_ready",
    "created_at",
    "cuda_version",
    "desired_preemptible_gpus",
    "gpu_type",
    "kube_config",
    "num_gpus",
    "num_preemptible_gpus",
    "nvidia_driver_version",
    "preemption_events",
    "project_id",
    "ready_timeout_seconds",
    "region",
    "status",
    "volume_name",
}
"""What a Ready cluster of `SPEC`'s kind stored on 0920a80, before issue 49."""

EVERY_CLUSTER = {"worker_nodes", "first_ready_at"}
"""The outputs issue 49 asks of every cluster (its nodes, when it was first Ready)."""


def test_a_cluster_without_the_new_fields_stores_none_of_them(sim: Sim) -> None:
    props = {k: v for k, v in SPEC.items() if k != "num_preemptible_gpus"}
    spec = CLUSTER.resolve(props)
    live = sim.ready(cluster_name="train", project_id="proj")
    stored = mapping.outputs(CLUSTER.to_props(spec), live)
    assert set(stored) == BEFORE_ISSUE_49 | EVERY_CLUSTER
    assert [n["compute_class"] for n in stored["worker_nodes"]] == ["standard"]


@pytest.mark.parametrize("half", ["cuda_version", "nvidia_driver_version"])
def test_a_missing_half_of_the_driver_pair_is_reported_on_that_half(half: str) -> None:
    """A user who forgot `cuda_version` looks for `cuda_version` in the error, not for
    `nvidia_version_id`, which they never set (the engine prints `property <field> ...`)."""
    failures = RULEBOOK.validate("train", {k: v for k, v in RESERVED.items() if k != half}, None)
    assert [f.field for f in failures] == [half]
    both = {k: v for k, v in RESERVED.items() if k not in ("cuda_version", "nvidia_driver_version")}
    assert [f.field for f in RULEBOOK.validate("train", both, None)] == [
        "cuda_version",
        "nvidia_driver_version",
    ]


WINDOW_WITHOUT_ENDS: dict[str, Any] = {
    k: v for k, v in RESERVED.items() if k not in ("duration_days", "num_reserved_gpus")
} | {"billing_type": "SCHEDULED_CAPACITY"}


@pytest.mark.parametrize(
    ("new", "old", "sentence"),
    [
        (
            {k: v for k, v in RESERVED.items() if k != "cuda_version"},
            None,
            "cuda_version not set and no nvidia_version_id; Together needs the driver, by "
            "nvidia_version_id (an id from `tg beta clusters list-regions`) or by cuda_version "
            "with nvidia_driver_version (e.g. cuda_version='12.8', nvidia_driver_version='570')",
        ),
        (
            RESERVED | {"nvidia_version_id": "nv-1"},
            None,
            "nvidia_version_id='nv-1' with cuda_version='12.8', nvidia_driver_version='570'; name "
            "the driver one way: either nvidia_version_id, or cuda_version with "
            "nvidia_driver_version (remove the other)",
        ),
        (
            {**WINDOW_WITHOUT_ENDS, "reservation_end_time": None},
            None,
            "billing_type='SCHEDULED_CAPACITY' needs reservation_start_time and "
            "reservation_end_time; Together reserves capacity for a window (set both, e.g. "
            "'2027-01-01T00:00:00Z' and '2027-01-08T00:00:00Z')",
        ),
        (
            RESERVED | {"reservation_start_time": "2027-01-31T00:00:00Z"},
            None,
            "reservation_end_time='2027-01-31T00:00:00Z' is not after "
            "reservation_start_time='2027-01-31T00:00:00Z'; a reservation ends after it starts "
            "(set reservation_end_time later than '2027-01-31T00:00:00Z')",
        ),
        (
            SPEC | {"num_reserved_gpus": 8.0},
            None,
            "num_reserved_gpus=8 with billing_type='ON_DEMAND'; only a RESERVED cluster has "
            "prepaid reserved GPUs (remove num_reserved_gpus, or set billing_type='RESERVED')",
        ),
        (
            SPEC | {"reservation_end_time": "2027-01-31T00:00:00Z"},
            None,
            "reservation_end_time='2027-01-31T00:00:00Z' with billing_type='ON_DEMAND'; only a "
            "prepaid cluster (RESERVED or SCHEDULED_CAPACITY) has an end (remove "
            "reservation_end_time)",
        ),
        (
            RESERVED | {"reservation_end_time": "2027-01-15T00:00:00Z"},
            RESERVED,
            "reservation_end_time 2027-01-31T00:00:00Z -> 2027-01-15T00:00:00Z shortens the "
            "running reservation; Together only extends one (set reservation_end_time to "
            "2027-01-31T00:00:00Z or later, or replace the cluster, e.g. with a new cluster_name)",
        ),
    ],
    ids=[
        "no-cuda",
        "two-ways",
        "window-without-end",
        "end-at-start",
        "reserved-on-demand",
        "end-on-demand",
        "shortened",
    ],
)
def test_each_refusal_reads_as_one_whole_sentence(
    new: dict[str, Any], old: dict[str, Any] | None, sentence: str
) -> None:
    """What a user reads, word for word: the value, the rule and the fix (a word dropped or a
    value in the wrong case would send them looking for the wrong setting)."""
    assert _reasons(new, old) == [f"cluster 'train': {sentence}"]


def test_a_scheduled_window_with_both_ends_in_order_passes() -> None:
    window = WINDOW_WITHOUT_ENDS | {"reservation_start_time": "2027-01-01T00:00:00Z"}
    assert _reasons(window) == []
