"""The Cluster field table parsing raw Pulumi properties: floats, unknowns, defaults, typos, type
errors; the possibly-unknown draft and the resolved spec."""

from __future__ import annotations

from typing import Any

import pytest
from pulumi.output import UNKNOWN as PULUMI_UNKNOWN

from tests.specs import ENGINE_PROPS as BASE
from together_facts.errors import SpecError
from together_facts.values import GPU_TYPES
from together_provider.cluster.table import CLUSTER, ClusterSpec
from together_provider.framework.schema import UNKNOWN, Draft, Failure, Unknown, is_unknown

INPUT_FIELDS = CLUSTER.input_names


def normalise(props: dict[str, Any]) -> tuple[ClusterSpec | None, list[Failure]]:
    _, failures = CLUSTER.parse(props)
    return (None, failures) if failures else (CLUSTER.resolve(props), [])


def to_props(spec: ClusterSpec | Draft[ClusterSpec]) -> dict[str, Any]:
    return CLUSTER.to_props(spec)


REQUIRED = (
    "cluster_name",
    "region",
    "gpu_type",
    "num_gpus",
)


def parse(**changes: Any) -> ClusterSpec:
    spec, failures = normalise(BASE | changes)
    assert failures == []
    assert spec is not None
    return spec


def draft(**changes: Any) -> Draft[ClusterSpec]:
    parsed, failures = CLUSTER.parse(BASE | changes)
    assert failures == []
    return parsed


def only_failure(**changes: Any) -> Failure:
    spec, failures = normalise(BASE | changes)
    assert spec is None
    assert len(failures) == 1, failures
    return failures[0]


def test_a_minimal_spec_gets_the_documented_defaults() -> None:
    spec = parse()
    assert spec == ClusterSpec(
        cluster_name="train",
        region="us-central-8",
        gpu_type="H100_SXM",
        num_gpus=8,
        cuda_version="12.6",
        nvidia_driver_version="560",
        num_preemptible_gpus=0,
        cluster_type="KUBERNETES",
        billing_type="ON_DEMAND",
        duration_days=None,
        project_id=None,
        volume_id=None,
        ready_timeout_seconds=1800.0,
        adopt_cluster_id=None,
    )


@pytest.mark.parametrize(
    ("name", "raw", "expected"),
    [
        ("num_gpus", 16.0, 16),
        ("num_gpus", 16, 16),
        ("num_preemptible_gpus", 8.0, 8),
        ("num_preemptible_gpus", 0.0, 0),
        ("duration_days", 7.0, 7),
    ],
)
def test_whole_float_counts_become_ints(name: str, raw: float, expected: int) -> None:
    extra = {"billing_type": "RESERVED"} if name == "duration_days" else {}
    value = getattr(parse(**extra, **{name: raw}), name)
    assert value == expected
    assert type(value) is int


def test_to_props_gives_plain_ints_and_strings() -> None:
    props = to_props(parse(num_preemptible_gpus=8.0, project_id="p", ready_timeout_seconds=600.0))
    assert props == BASE | {
        "num_gpus": 8,
        "num_preemptible_gpus": 8,
        "cluster_type": "KUBERNETES",
        "billing_type": "ON_DEMAND",
        "auto_scale": False,
        "project_id": "p",
        "ready_timeout_seconds": 600,
    }
    assert all(type(props[k]) is int for k in ("num_gpus", "num_preemptible_gpus"))
    assert type(props["gpu_type"]) is str


def test_to_props_keeps_a_fractional_timeout() -> None:
    assert to_props(parse(ready_timeout_seconds=90.5))["ready_timeout_seconds"] == 90.5


def test_to_props_round_trips() -> None:
    spec = parse(num_preemptible_gpus=8, project_id="p", volume_id="v", adopt_cluster_id="c")
    assert normalise(to_props(spec)) == (spec, [])


@pytest.mark.parametrize("raw", [UNKNOWN, PULUMI_UNKNOWN, Unknown.VALUE])
def test_recognises_every_form_of_unknown(raw: object) -> None:
    assert is_unknown(raw)


@pytest.mark.parametrize("raw", ["train", 8, 0, None, "", 8.0])
def test_known_values_are_not_unknown(raw: object) -> None:
    assert not is_unknown(raw)


@pytest.mark.parametrize("name", INPUT_FIELDS)
@pytest.mark.parametrize("raw", [UNKNOWN, PULUMI_UNKNOWN])
def test_unknown_values_pass_through_the_draft_as_the_marker(name: str, raw: object) -> None:
    spec = draft(**{name: raw})
    assert getattr(spec, name) is Unknown.VALUE
    assert to_props(spec)[name] == UNKNOWN


@pytest.mark.parametrize("name", INPUT_FIELDS)
def test_the_resolved_spec_never_holds_an_unknown(name: str) -> None:
    with pytest.raises(SpecError, match=f"{name} was still unknown"):
        CLUSTER.resolve(BASE | {name: UNKNOWN})


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (8.5, "num_gpus=8.5 is not a whole number"),
        (True, "num_gpus=True is a bool"),
        ("8", "num_gpus='8' is a str; a GPU count is a whole number such as 8 (drop the quotes)"),
        (-8, "num_gpus=-8 is negative"),
        (-8.0, "num_gpus=-8 is negative"),
        ([8], "num_gpus=[8] is a list"),
    ],
)
def test_bad_counts_are_reported_never_coerced(raw: object, expected: str) -> None:
    failure = only_failure(num_gpus=raw)
    assert failure.field == "num_gpus"
    assert expected in failure.reason


def test_unknown_key_names_the_closest_valid_key() -> None:
    failure = only_failure(num_gpu=8)
    assert failure == Failure("num_gpu", "unknown property 'num_gpu'; did you mean 'num_gpus'?")


def test_unknown_key_without_a_close_match_lists_the_valid_keys() -> None:
    failure = only_failure(colour="blue")
    assert failure.field == "colour"
    assert "valid properties: cluster_name, region" in failure.reason


def test_pulumi_internal_keys_are_ignored() -> None:
    assert normalise(BASE | {"__provider": "pickle", "__meta": 1})[1] == []


@pytest.mark.parametrize("name", REQUIRED)
def test_missing_required_field_is_named_with_an_example(name: str) -> None:
    props = {k: v for k, v in BASE.items() if k != name}
    _, failures = normalise(props)
    assert [f.field for f in failures] == [name]
    assert failures[0].reason.startswith(f"{name} is required; set it, e.g. {name}=")


def test_none_counts_as_missing() -> None:
    assert only_failure(region=None).field == "region"


@pytest.mark.parametrize("name", ["project_id", "volume_id", "adopt_cluster_id"])
def test_an_empty_optional_id_means_unset(name: str) -> None:
    assert getattr(parse(**{name: ""}), name) is None


@pytest.mark.parametrize(
    ("name", "raw"), [("cluster_name", ""), ("region", "  "), ("cuda_version", 12.6)]
)
def test_required_strings_must_be_non_empty_strings(name: str, raw: object) -> None:
    assert only_failure(**{name: raw}).field == name


@pytest.mark.parametrize(
    ("name", "raw", "hint"),
    [
        ("gpu_type", "h100_sxm", "did you mean 'H100_SXM'?"),
        ("gpu_type", "A100", "use one of H100_SXM, H200_SXM, RTX_6000_PCI"),
        ("cluster_type", "k8s", "use one of KUBERNETES, SLURM"),
        ("billing_type", "SPOT", "use one of RESERVED, ON_DEMAND, SCHEDULED_CAPACITY"),
    ],
)
def test_unknown_enum_values_list_the_valid_ones(name: str, raw: str, hint: str) -> None:
    failure = only_failure(**{name: raw})
    assert failure.field == name
    assert f"{name}={raw!r} is not a valid value" in failure.reason
    assert hint in failure.reason


@pytest.mark.parametrize("gpu", GPU_TYPES)
def test_every_documented_gpu_type_is_accepted(gpu: str) -> None:
    assert parse(gpu_type=gpu).gpu_type == gpu


@pytest.mark.parametrize("days", [0, 91, -1])
def test_duration_days_is_bounded(days: int) -> None:
    failure = only_failure(billing_type="RESERVED", duration_days=days)
    assert failure.field == "duration_days"
    assert "1 to 90 days" in failure.reason


@pytest.mark.parametrize("raw", [0, -5.0, "1800", False])
def test_ready_timeout_must_be_a_positive_number(raw: object) -> None:
    failure = only_failure(ready_timeout_seconds=raw)
    assert failure.field == "ready_timeout_seconds"
    assert failure.reason.startswith("ready_timeout_seconds=")
    assert "e.g. 1800" in failure.reason


def test_partial_normalise_marks_only_the_failed_fields_unknown() -> None:
    spec, failures = CLUSTER.parse(BASE | {"num_gpus": "8", "num_preemptible_gpus": 8})
    assert [f.field for f in failures] == ["num_gpus"]
    assert spec.num_gpus is Unknown.VALUE
    assert spec.num_preemptible_gpus == 8


def test_every_failure_is_reported_at_once() -> None:
    _, failures = normalise({"num_gpu": 8, "gpu_type": "A100"})
    fields = {f.field for f in failures}
    assert {"num_gpu", "gpu_type", "cluster_name", "num_gpus"} <= fields
