"""The native plugin's adapter without an engine: wire values, the package schema, check/diff,
errors, and the stack config's host switch."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ClassVar

import pytest
from pulumi.provider.experimental.property_value import PropertyValue
from pulumi.provider.experimental.provider import (
    CheckRequest,
    DeleteRequest,
    DiffRequest,
    PropertyDiffKind,
    UpdateRequest,
)

from tests.specs import CLUSTER_SPEC
from together_facts.errors import DeadlineExceededError
from together_provider.cluster.table import CLUSTER
from together_provider.framework.lifecycle import Applied
from together_provider.hosts.native import _import, _properties
from together_provider.hosts.native.package_schema import package_schema
from together_provider.hosts.native.provider import HostError, TogetherProvider
from together_provider.registry import CLUSTER as _CLUSTER
from together_provider.registry import VOLUME as _VOLUME
from together_provider.stack_config import ConfigError, load
from together_provider.volume.table import VOLUME

CLUSTER_TOKEN, VOLUME_TOKEN = _CLUSTER.token, _VOLUME.token

URN = f"urn:pulumi:dev::proj::{CLUSTER_TOKEN}::train"


def _values(props: dict[str, Any]) -> dict[str, PropertyValue]:
    return _properties.to_values(props)


def _provider() -> TogetherProvider:
    return TogetherProvider(ThreadPoolExecutor(max_workers=1))


def test_wire_names_are_camel_case_and_counts_travel_as_doubles() -> None:
    values = _properties.to_values({"num_gpus": 8, "kube_config": "k"}, secret=("kube_config",))
    assert values["numGpus"] == PropertyValue(8.0)
    assert values["kubeConfig"].is_secret
    assert _properties.to_props(values) == {"num_gpus": 8.0, "kube_config": "k"}
    assert _properties.snake("numGpu") == "numGpu"  # unknown names reach check, which names them


def test_schema_declares_every_field_of_the_table() -> None:
    cluster = package_schema()["resources"][CLUSTER_TOKEN]
    assert set(cluster["inputProperties"]) == {_properties.camel(n) for n in CLUSTER.input_names}
    assert set(cluster["properties"]) == {
        _properties.camel(n) for n in (*CLUSTER.input_names, *CLUSTER.output_names)
    }
    assert cluster["properties"]["kubeConfig"]["secret"] is True
    assert cluster["inputProperties"]["numGpus"]["type"] == "integer"
    assert "clusterName" not in cluster["requiredInputs"]  # defaults to the resource name
    assert package_schema()["config"]["variables"]["apiKey"]["secret"] is True


def test_schema_declares_both_resources_from_their_tables() -> None:
    resources = package_schema()["resources"]
    assert set(resources) == {CLUSTER_TOKEN, VOLUME_TOKEN}
    volume = resources[VOLUME_TOKEN]
    assert set(volume["inputProperties"]) == {_properties.camel(n) for n in VOLUME.input_names}
    assert set(volume["properties"]) == {
        _properties.camel(n) for n in (*VOLUME.input_names, *VOLUME.output_names)
    }
    assert volume["inputProperties"]["sizeTib"]["type"] == "integer"
    assert volume["inputProperties"]["isLifecycleIndependent"]["default"] is True
    assert volume["properties"]["clusterIds"] == {
        "type": "array",
        "items": {"type": "string"},
        "description": VOLUME.outputs[-1].doc,
    }
    assert sorted(volume["requiredInputs"]) == ["region", "sizeTib"]  # the name defaults


VOLUME_URN = f"urn:pulumi:dev::proj::{VOLUME_TOKEN}::ckpt"
CKPT = {"region": "us-central-8", "size_tib": 2}


def test_volume_check_names_it_after_the_resource_and_rejects_a_shrink() -> None:
    olds = _values({**CKPT, "size_tib": 4, "volume_name": "ckpt"})
    request = CheckRequest(VOLUME_URN, olds, _values(CKPT), b"")
    failures = asyncio.run(_provider().check(request)).failures
    assert failures
    (failure,) = failures
    assert failure.property == "sizeTib"
    assert "volume 'ckpt': size_tib 4 -> 2 would shrink the volume" in failure.reason


def test_a_type_the_plugin_does_not_serve_is_named() -> None:
    request = CheckRequest("urn:pulumi:dev::proj::together:index:Bucket::b", {}, {}, b"")
    with pytest.raises(HostError, match="serves together:index:Cluster, together:index:Shared"):
        asyncio.run(_provider().check(request))


def test_an_imported_volume_takes_the_unread_inputs_from_the_program_until_updated() -> None:
    imported = {"volume_name": "ckpt", "size_tib": 2, _import.UNREAD: ["region", "project_id"]}
    program = {**CKPT, "volume_name": "ckpt", "project_id": "p"}
    request = DiffRequest(VOLUME_URN, "vol-1", _values(imported), _values(program), [])
    assert not asyncio.run(_provider().diff(request)).changes
    # Without the marker (a volume this stack created), a new project is a replacement.
    created = {**CKPT, "volume_name": "ckpt"}
    request = DiffRequest(VOLUME_URN, "vol-1", _values(created), _values(program), [])
    assert asyncio.run(_provider().diff(request)).replaces == ["projectId"]


def test_check_names_the_cluster_after_the_resource_and_rejects_zero_standard() -> None:
    spec = {**CLUSTER_SPEC, "num_gpus": 0}
    response = asyncio.run(_provider().check(CheckRequest(URN, {}, _values(spec), b"")))
    assert response.failures
    (failure,) = response.failures
    assert failure.property == "numGpus"
    assert "cluster 'train': num_gpus=0 leaves no standard node" in failure.reason


def test_check_returns_ints_and_applied_defaults() -> None:
    response = asyncio.run(_provider().check(CheckRequest(URN, {}, _values(CLUSTER_SPEC), b"")))
    assert not response.failures
    assert response.inputs is not None
    assert response.inputs["clusterName"] == PropertyValue("train")
    assert response.inputs["numPreemptibleGpus"] == PropertyValue(0.0)


def test_diff_reports_in_place_and_replace_per_property() -> None:
    old = {**CLUSTER_SPEC, "cluster_name": "train"}
    new = {**old, "num_preemptible_gpus": 16, "region": "us-west-2"}
    request = DiffRequest(URN, "c-1", _values(old), _values(new), [])
    response = asyncio.run(_provider().diff(request))
    assert response.replaces == ["region"]
    assert response.delete_before_replace  # same name: delete first
    assert response.detailed_diff["region"].kind is PropertyDiffKind.UPDATE_REPLACE
    assert response.detailed_diff["numPreemptibleGpus"].kind is PropertyDiffKind.UPDATE


def test_a_together_error_becomes_the_products_sentence() -> None:
    def fail() -> None:
        raise DeadlineExceededError(
            "cluster c-1 was not Ready in time", cluster_id="c-1", fix="raise the timeout"
        )

    with pytest.raises(HostError) as raised:
        asyncio.run(_provider()._run(fail))
    assert raised.value.message == "cluster c-1 was not Ready in time (fix: raise the timeout)"


def test_stack_config_host_defaults_to_dynamic_and_rejects_unknown_hosts() -> None:
    clusters = {"train": _camel(CLUSTER_SPEC)}
    assert load({"clusters": clusters}).host == "dynamic"
    assert load({"clusters": clusters, "host": "native"}).host == "native"
    with pytest.raises(ConfigError) as failed:
        load({"clusters": clusters, "host": "nativ"})
    assert "host: 'nativ' is not a provider host; use one of dynamic, native" in str(failed.value)


def _camel(props: dict[str, Any]) -> dict[str, Any]:
    return {_properties.camel(k): v for k, v in props.items()}


class _Recorder:
    """Stands in for `ClusterLifecycle`: records the timeout each operation is given."""

    seen: ClassVar[dict[str, float | None]] = {}

    def __init__(self, _client: object, _say: object) -> None:
        pass

    def update(self, id_: str, old: Any, new: Any, *, timeout_seconds: float | None) -> Any:
        self.seen["update"] = timeout_seconds
        return Applied(id_, {})

    def delete(self, id_: str, props: Any, *, timeout_seconds: float | None) -> None:
        self.seen["delete"] = timeout_seconds


def test_update_and_delete_pass_the_custom_timeouts_and_none_when_unset(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("together_provider.cluster.lifecycle.ClusterLifecycle", _Recorder)
    monkeypatch.setenv("TOGETHER_API_KEY", "k")
    # An update's news are checked inputs: the name is filled in by then.
    provider, props = _provider(), _values({**CLUSTER_SPEC, "cluster_name": "train"})
    for timeout, expected in ((90.0, 90.0), (0.0, None)):
        _Recorder.seen.clear()  # a call that never happens must not pass on the last pass's value
        update = UpdateRequest(URN, "c-1", props, props, timeout, [], False)
        asyncio.run(provider.update(update))
        asyncio.run(provider.delete(DeleteRequest(URN, "c-1", props, timeout)))
        assert _Recorder.seen == {"update": expected, "delete": expected}


def test_a_missing_key_names_the_stack_config_that_sets_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The same Pulumi wording as the dynamic host's (`framework.fixes`), not the API layer's."""
    monkeypatch.delenv("TOGETHER_API_KEY", raising=False)
    delete = DeleteRequest(URN, "c-1", _values(CLUSTER_SPEC), 0.0)
    with pytest.raises(HostError) as refused:
        asyncio.run(_provider().delete(delete))
    assert "(fix: set together:apiKey as a secret or TOGETHER_API_KEY)" in refused.value.message


PREVIEW_PROBE = """
import asyncio, json, sys
from concurrent.futures import ThreadPoolExecutor
from pulumi.provider.experimental.provider import CheckRequest, DiffRequest
from together_provider.hosts.native import _properties
from together_provider.native import Cluster, ClusterArgs
from together_provider.hosts.native.plugin import Servicer
from together_provider.hosts.native.provider import TogetherProvider
provider = TogetherProvider(ThreadPoolExecutor(1))
urn = "urn:pulumi:s::p::together:index:Cluster::t"
news = _properties.to_values(dict(region="r", gpu_type="H100_SXM", num_gpus=8, cuda_version="12.8",
                            nvidia_driver_version="570"))
checked = asyncio.run(provider.check(CheckRequest(urn, {}, news, b"")))
assert not checked.failures and checked.inputs
same = DiffRequest(urn, "c-1", checked.inputs, checked.inputs, [])
assert not asyncio.run(provider.diff(same)).changes
print(json.dumps(sorted({m.split(".")[0] for m in sys.modules})))
"""


def test_a_preview_on_the_native_host_loads_neither_pydantic_nor_httpx() -> None:
    # Program side (the native Cluster) and plugin side (check, diff): apply paths load the client.
    out = subprocess.run(
        [sys.executable, "-c", PREVIEW_PROBE], capture_output=True, text=True, check=True
    ).stdout
    assert {"pydantic", "pydantic_core", "httpx"} & set(json.loads(out)) == set()
