"""The SharedVolume's table and rules, and the cluster rule that keeps a volume in its region."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from tests.specs import CLUSTER_SPEC
from together_provider.cluster import rules
from together_provider.framework.schema import UNKNOWN, Policy
from together_provider.volume import rules as volume_rules
from together_provider.volume.table import VOLUME

VOLUME_PROPS: dict[str, Any] = {"volume_name": "ckpt", "region": "us-central-8", "size_tib": 4.0}


def _checked(**changes: Any) -> dict[str, Any]:
    inputs, failures = volume_rules.RULEBOOK.check_inputs("ckpt", {**VOLUME_PROPS, **changes}, None)
    assert failures == []
    return inputs


def _reasons(new: dict[str, Any], old: dict[str, Any] | None = None) -> list[str]:
    return [f.reason for f in volume_rules.RULEBOOK.validate("ckpt", new, old)]


def test_only_the_size_changes_in_place_and_what_together_fixes_at_create_replaces() -> None:
    by_policy = {p: {n for n, fp in VOLUME.policies.items() if fp is p} for p in Policy}
    assert by_policy[Policy.IN_PLACE] == {"size_tib"}
    assert by_policy[Policy.REPLACE] == {
        "volume_name",
        "region",
        "project_id",
        "is_lifecycle_independent",
        "instance_cluster_id",
    }
    assert by_policy[Policy.LOCAL] == {"ready_timeout_seconds", "adopt_volume_id"}


def test_a_shrink_is_rejected_with_the_reason_and_the_fix() -> None:
    old = _checked()
    (reason,) = _reasons({**VOLUME_PROPS, "size_tib": 2.0}, old)
    assert reason.startswith("volume 'ckpt': size_tib 4 -> 2 would shrink the volume")
    assert "Together volumes only grow" in reason
    assert "keep size_tib >= 4" in reason


def test_a_hosts_check_names_the_volume_and_drops_host_keys() -> None:
    old = {**_checked(), "__provider": "pickle"}
    inputs, failures = volume_rules.RULEBOOK.check_resource(
        old, {**VOLUME_PROPS, "size_tib": 2.0, "__provider": "pickle"}
    )
    assert "__provider" not in inputs
    assert [f.field for f in failures] == ["size_tib"]
    assert failures[0].reason.startswith("volume 'ckpt': size_tib 4 -> 2")
    _, unnamed = volume_rules.RULEBOOK.check_resource(
        {}, {**VOLUME_PROPS, "volume_name": UNKNOWN, "x": 1}
    )
    assert [f.reason.split(":")[0] for f in unnamed] == ["volume '(unnamed)'"]


def test_a_shrink_that_comes_with_a_replacement_is_a_new_volume() -> None:
    old = _checked()
    assert _reasons({**VOLUME_PROPS, "size_tib": 1, "region": "us-west-2"}, old) == []


def test_growing_is_one_put_of_size_tib() -> None:
    old = {**_checked(), "volume_id": "vol-1", "status": "available"}
    plan = volume_rules.RULEBOOK.plan(old, _checked(size_tib=8))
    assert plan.update == {"size_tib": 8}
    assert plan.replaces == ()


@pytest.mark.parametrize(
    "change",
    [
        {"volume_name": "other"},
        {"region": "us-west-2"},
        {"project_id": "proj-b"},
        {"is_lifecycle_independent": False},
    ],
)
def test_identity_changes_replace_create_first_and_put_nothing(change: dict[str, Any]) -> None:
    plan = volume_rules.RULEBOOK.plan(_checked(), _checked(**change))
    assert plan.replaces == tuple(change)
    assert plan.update == {}
    assert plan.delete_before_replace is False


@pytest.mark.parametrize(
    ("size", "expected"),
    [
        (0, "size_tib=0 is below Together's minimum; a volume is at least 1 TiB"),
        (1.5, "size_tib=1.5 is not a whole number"),
        ("4", "size_tib='4' is a str"),
    ],
)
def test_a_bad_size_is_named_with_the_fix(size: object, expected: str) -> None:
    (reason,) = _reasons({**VOLUME_PROPS, "size_tib": size})
    assert expected in reason


def test_unknown_sizes_are_never_rejected() -> None:
    assert _reasons({**VOLUME_PROPS, "size_tib": UNKNOWN}, _checked()) == []


def test_the_stack_not_a_cluster_deletion_decides_when_a_volume_goes_by_default() -> None:
    assert _checked()["is_lifecycle_independent"] is True


# --- the cluster's side: a volume must be in the cluster's region --------------------------------


def _cluster_reasons(**changes: Any) -> list[str]:
    props = {"cluster_name": "train", **CLUSTER_SPEC, **changes}
    return [f.reason for f in rules.RULEBOOK.validate("train", props, None)]


def test_a_volume_in_another_region_is_rejected_when_both_regions_are_known() -> None:
    (reason,) = _cluster_reasons(volume_id="vol-1", volume_region="us-west-2")
    assert reason.startswith(
        "cluster 'train': volume_region='us-west-2' differs from region='us-central-8'"
    )
    assert "volume vol-1 cannot be attached" in reason


def test_a_volume_still_being_created_is_checked_too() -> None:
    (reason,) = _cluster_reasons(volume_id=UNKNOWN, volume_region="us-west-2")
    assert "the volume being created cannot be attached" in reason


@pytest.mark.parametrize(
    "changes",
    [
        {"volume_id": "vol-1", "volume_region": "us-central-8"},
        {"volume_id": "vol-1"},  # region not given: nothing to compare
        {"volume_id": UNKNOWN, "volume_region": UNKNOWN},
        {"volume_id": "vol-1", "volume_region": "us-west-2", "region": UNKNOWN},
    ],
)
def test_the_region_rule_passes_a_match_and_skips_what_is_not_known(
    changes: dict[str, Any],
) -> None:
    assert _cluster_reasons(**changes) == []


def test_the_volume_region_is_never_sent_to_together() -> None:
    from together_provider.cluster.table import CLUSTER

    spec = CLUSTER.resolve(
        {"cluster_name": "t", **CLUSTER_SPEC, "volume_id": "v", "volume_region": "us-central-8"}
    )
    body = CLUSTER.request_body(spec)
    assert body["volume_id"] == "v" and "volume_region" not in body


def test_a_volume_preview_loads_neither_pydantic_nor_httpx() -> None:
    code = (
        "from together_provider import SharedVolume, SharedVolumeArgs\n"
        "from together_provider.volume.provider import VolumeProvider\n"
        "p = VolumeProvider()\n"
        "news = dict(volume_name='c', region='r', size_tib=2.0)\n"
        "assert not p.check({}, news).failures\n"
        "assert not p.diff('v-1', news, news).changes\n"
        "import json, sys\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert {"pydantic", "pydantic_core", "httpx"} & set(json.loads(out.stdout)) == set()
