"""The provider hooks as plain methods, against a scripted Together API (httpx.MockTransport)."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
import traceback
import types
from typing import Any

import httpx
import pytest
from pulumi.dynamic import ConfigureRequest
from pulumi.dynamic.config import Config
from pulumi.output import Unknown
from pytest_mock import MockerFixture

from tests.fake_api import CLUSTERS, ONE, SPEC, FakeApi, cluster, reply
from together_api import client as client_module
from together_api.client import TogetherClient
from together_facts.errors import (
    AuthenticationError,
    NotFoundError,
    ProvisioningFailedError,
    SpecError,
)
from together_provider.cluster.provider import ClusterProvider
from together_provider.dynamic.provider import LifecycleProvider
from together_provider.registry import SharedVolumeProvider as VolumeProvider


@pytest.fixture
def api(mocker: MockerFixture) -> FakeApi:
    fake = FakeApi()

    def client(
        api_key: str | None = None, base_url: str | None = None, **options: Any
    ) -> TogetherClient:
        return TogetherClient(
            api_key="k",
            base_url=base_url,
            transport=httpx.MockTransport(fake),
            sleep=lambda _: None,
            **options,
        )

    mocker.patch.object(client_module, "TogetherClient", side_effect=client)
    return fake


def test_check_turns_float_counts_into_ints() -> None:
    result = ClusterProvider().check({}, {**SPEC, "__provider": "pickle"})
    assert result.failures == []
    assert result.inputs["num_gpus"] == 8
    assert isinstance(result.inputs["num_gpus"], int)
    assert "__provider" not in result.inputs


def test_check_lets_unknown_values_through_at_preview() -> None:
    result = ClusterProvider().check({}, {**SPEC, "cluster_name": Unknown()})
    assert result.failures == []


def test_check_names_the_field_of_a_rejected_spec() -> None:
    result = ClusterProvider().check({}, {**SPEC, "num_gpus": 0.0})
    assert [f.property for f in result.failures] == ["num_gpus"]
    assert "cluster 'train'" in result.failures[0].reason


def test_diff_of_a_target_change_is_in_place() -> None:
    olds = {**SPEC, "status": "Ready", "allocated_preemptible_gpus": 8}
    result = ClusterProvider().diff("c-1", olds, {**SPEC, "num_preemptible_gpus": 24.0})
    assert result.changes is True
    assert result.replaces == []


def test_create_continues_with_the_cluster_when_the_post_answer_is_lost(api: FakeApi) -> None:
    api.on("GET", CLUSTERS, reply(200, {"clusters": []}), reply(200, {"clusters": [cluster()]}))
    api.on("POST", CLUSTERS, reply(500, {"error": {"message": "boom"}}))
    api.on("GET", ONE, reply(200, cluster()))
    result = ClusterProvider().create(dict(SPEC))
    assert result.id == "c-1"
    assert api.seen.count(("POST", CLUSTERS)) == 1  # never a blind second POST


def test_create_refuses_a_duplicate_name(api: FakeApi) -> None:
    api.on("GET", CLUSTERS, reply(200, {"clusters": [cluster()]}))
    with pytest.raises(SpecError, match="adopt_cluster_id='c-1'"):
        ClusterProvider().create(dict(SPEC))
    assert ("POST", CLUSTERS) not in api.seen


def test_failed_provisioning_deletes_the_cluster(api: FakeApi) -> None:
    failed = cluster(
        "RunningAcceptanceTests",
        phase_transitions=[
            {
                "phase": "CLUSTER_PHASE_ACCEPTANCE_TESTS_FAILED",
                "transition_time": "2026-01-01T00:00:00Z",
            }
        ],
    )
    api.on("GET", CLUSTERS, reply(200, {"clusters": []}))
    api.on("POST", CLUSTERS, reply(200, cluster("WaitingForControlPlaneNodes")))
    api.on("GET", ONE, reply(200, failed), reply(200, failed), reply(404, {}))
    api.on("DELETE", ONE, reply(200, {"cluster_id": "c-1"}))
    with pytest.raises(ProvisioningFailedError, match="was deleted so nothing is left billing"):
        ClusterProvider().create(dict(SPEC))
    assert ("DELETE", ONE) in api.seen


def test_update_of_the_target_is_exactly_one_put(api: FakeApi) -> None:
    api.on("PUT", ONE, reply(200, cluster(desired_preemptible_gpus=24)))
    olds = {**SPEC, "cluster_id": "c-1", "status": "Ready", "kube_config": "x"}
    result = ClusterProvider().update("c-1", olds, {**SPEC, "num_preemptible_gpus": 24.0})
    assert api.seen == [("PUT", ONE)]
    assert result.outs is not None
    assert result.outs["desired_preemptible_gpus"] == 24
    assert result.outs["kube_config"] == "apiVersion: v1\n"


def test_update_of_a_provider_only_setting_calls_no_api(api: FakeApi) -> None:
    olds = {**SPEC, "cluster_id": "c-1", "status": "Ready", "kube_config": "x"}
    result = ClusterProvider().update("c-1", olds, {**SPEC, "ready_timeout_seconds": 60.0})
    assert api.seen == []
    assert result.outs is not None
    assert result.outs["kube_config"] == "x"  # outputs kept, not wiped
    assert result.outs["ready_timeout_seconds"] == 60


def test_read_of_a_deleted_cluster_reports_it_gone(api: FakeApi) -> None:
    result = ClusterProvider().read("c-1", dict(SPEC))
    assert result.id is None


def test_read_returns_the_live_counts_as_inputs(api: FakeApi) -> None:
    api.on("GET", ONE, reply(200, cluster(num_gpus=16, desired_preemptible_gpus=32)))
    result = ClusterProvider().read("c-1", {**SPEC, "allocated_preemptible_gpus": 8})
    assert result.inputs is not None
    assert (result.inputs["num_gpus"], result.inputs["num_preemptible_gpus"]) == (16, 32)
    assert "allocated_preemptible_gpus" not in result.inputs


def test_a_cluster_deleted_outside_the_stack_is_a_404_whose_fix_is_a_refresh(api: FakeApi) -> None:
    """The API layer's fixes name no caller: this host gives it the stack's (`framework.fixes`)."""
    olds = {**SPEC, "cluster_id": "c-1", "status": "Ready", "kube_config": "x"}
    with pytest.raises(NotFoundError) as gone:
        ClusterProvider().update("c-1", olds, {**SPEC, "num_preemptible_gpus": 24.0})
    assert "deleted outside this stack is gone: `pulumi refresh` removes it" in str(gone.value)


def test_a_missing_key_names_the_stack_config_that_sets_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("TOGETHER_API_KEY", raising=False)
    with pytest.raises(AuthenticationError) as refused:
        ClusterProvider().delete("c-1", dict(SPEC))
    assert "(fix: set together:apiKey as a secret or TOGETHER_API_KEY)" in str(refused.value)


def test_delete_tolerates_an_already_deleted_cluster(api: FakeApi) -> None:
    ClusterProvider().delete("c-1", dict(SPEC))
    assert api.seen == [("DELETE", ONE)]


@pytest.mark.parametrize(
    ("provider_class", "module"),
    [
        (ClusterProvider, b"together_provider.registry"),
        (VolumeProvider, b"together_provider.registry"),
    ],
)
def test_the_pickled_provider_holds_no_credentials(
    provider_class: type[LifecycleProvider], module: bytes
) -> None:
    import dill

    provider = provider_class()
    assert vars(provider) == {}
    pickled = dill.dumps(provider, recurse=True)
    assert len(pickled) < 200  # by reference: module and class name only
    assert module in pickled
    assert provider_class.__name__.encode() in pickled


DYNAMIC_HOST_LAUNCH = "pulumi.dynamic"
"""What the engine's `pulumi-resource-pulumi-python` script runs: `python -u -m pulumi.dynamic`
(written out here, not taken from `dynamic.HOST_MODULE`, so that a wrong constant fails)."""


def _dynamic_host_spec() -> importlib.machinery.ModuleSpec:
    """The spec `python -m pulumi.dynamic` gives the host's `__main__`: `-m` on a package runs
    its `__main__` submodule, under that full name, from the installed SDK."""
    spec = importlib.util.find_spec(f"{DYNAMIC_HOST_LAUNCH}.__main__")
    assert spec is not None and spec.origin is not None
    assert spec.origin.endswith("pulumi/dynamic/__main__.py")
    return spec


def test_in_the_dynamic_host_our_error_is_its_sentence_and_a_bug_keeps_its_traceback(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The engine tests see no traceback (tests/integration/scenarios/test_errors.py); this holds
    the other half: any other exception still reaches the user with one, and only the host's
    `__main__` is touched."""
    program = types.ModuleType("__main__")
    monkeypatch.setitem(sys.modules, "__main__", program)
    program.traceback = traceback  # type: ignore[attr-defined]
    ClusterProvider().configure(ConfigureRequest(Config(raw_config={}, project_name="p")))
    assert program.traceback is traceback  # not the host

    host = types.ModuleType("__main__")
    host.__spec__ = _dynamic_host_spec()
    host.traceback = traceback  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "__main__", host)
    ClusterProvider().configure(ConfigureRequest(Config(raw_config={}, project_name="p")))
    shown = host.traceback
    try:
        raise AuthenticationError("GET /compute/clusters failed with HTTP 401", fix="check it")
    except AuthenticationError:
        assert shown.format_exc() == "GET /compute/clusters failed with HTTP 401 (fix: check it)"
    try:
        raise KeyError("bug")
    except KeyError:
        assert shown.format_exc().startswith("Traceback (most recent call last):")
        assert shown.format_exc().endswith("KeyError: 'bug'\n")
