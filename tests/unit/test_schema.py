"""The field-table machinery: every view derives from one declaration per field, for Cluster and
for any other resource that declares its own table."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Literal

import pulumi
import pytest

from together_provider.cluster.table import CLUSTER, ClusterOutputs, ClusterSpec
from together_provider.framework.schema import Policy, Schema, Unknown, input_field, output_field
from together_provider.resources import Cluster


def test_the_resource_declares_every_output_of_the_table() -> None:
    # Real objects, not strings: the generated module has no `from __future__ import annotations`
    # (the SDK evaluates every resource's hints as it registers it; see codegen._module).
    hints = Cluster.__annotations__
    declared = {n for n, a in hints.items() if getattr(a, "__origin__", None) is pulumi.Output}
    assert declared >= set(CLUSTER.output_names)
    assert set(CLUSTER.secret_outputs) == {"kube_config"}
    assert {f.name for f in dataclasses.fields(ClusterOutputs)} == set(CLUSTER.output_names)


def test_identity_and_live_fields_come_from_policy_and_live_attribute() -> None:
    assert [f.name for f in CLUSTER.live_fields] == ["num_gpus", "num_preemptible_gpus"]
    assert {f.name for f in CLUSTER.identity_fields} == {
        "cluster_name",
        "region",
        "gpu_type",
        "cuda_version",
        "nvidia_driver_version",
        "cluster_type",
        "billing_type",
        "project_id",
        "volume_id",
    }
    assert all(f.policy is Policy.REPLACE for f in CLUSTER.identity_fields)


def test_provider_only_fields_are_never_sent() -> None:
    spec = CLUSTER.resolve(
        {
            "cluster_name": "t",
            "region": "r",
            "gpu_type": "H100_SXM",
            "num_gpus": 8.0,
            "cuda_version": "12.8",
            "nvidia_driver_version": "570",
            "adopt_cluster_id": "c-9",
        }
    )
    body = CLUSTER.request_body(spec)
    assert "ready_timeout_seconds" not in body and "adopt_cluster_id" not in body
    assert "num_preemptible_gpus" not in body  # omitted at its default
    assert type(body["num_gpus"]) is int
    assert isinstance(spec, ClusterSpec)


# --- a second resource declares its own table with the same mechanism ---------------------------


@dataclass(frozen=True)
class VolumeSpec:
    volume_name: str = input_field(
        Policy.REPLACE, "names are fixed", "The name.", names_resource=True, live="volume_name"
    )
    size_tib: int = input_field(Policy.IN_PLACE, "volumes grow", "Size.", example="1", live="size")
    tier: Literal["fast", "cheap"] = input_field(Policy.REPLACE, "fixed", "Tier.", default="fast")


@dataclass(frozen=True)
class VolumeOutputs:
    volume_id: str = output_field("Its id.")
    token: str = output_field("Mount token.", secret=True, source=lambda v: v.secret)


VOLUME = Schema("volume", VolumeSpec, VolumeOutputs)


def test_a_second_resource_gets_every_view_from_its_own_table() -> None:
    draft, failures = VOLUME.parse({"volume_name": "data", "size_tib": "2", "tier": "fsat"})
    assert [f.field for f in failures] == ["size_tib", "tier"]
    assert "did you mean 'fast'?" in failures[1].reason
    assert draft.size_tib is Unknown.VALUE
    spec = VOLUME.resolve({"volume_name": "data", "size_tib": 2.0})
    assert spec == VolumeSpec("data", 2, "fast")
    assert VOLUME.config_keys == {
        "volumeName": "volume_name",
        "sizeTib": "size_tib",
        "tier": "tier",
    }
    live = SimpleNamespace(volume_id="v-1", secret="s", volume_name="other", size=4)
    assert VOLUME.outputs_of(live) == {"volume_id": "v-1", "token": "s"}
    assert VOLUME.secret_outputs == ("token",)
    assert VOLUME.live_inputs({"volume_name": "data", "size_tib": 2}, live)["size_tib"] == 4
    assert VOLUME.identity_mismatches(spec, live) == [
        "volume_name: volume has 'other', spec has 'data'"
    ]


def test_a_field_declared_without_the_table_helpers_is_refused() -> None:
    @dataclass(frozen=True)
    class Loose:
        name: str = "x"

    with pytest.raises(TypeError, match=r"Loose.name is not declared with input_field\(\)"):
        Schema("loose", Loose, VolumeOutputs)
    with pytest.raises(TypeError, match=r"Loose.name is not declared with output_field\(\)"):
        Schema("loose", VolumeSpec, Loose)
