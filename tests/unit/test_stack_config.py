"""Per-environment stack config: the committed stacks validate, bad configs list every problem."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from together_provider.cluster.table import CLUSTER
from together_provider.registry import CLUSTER as CLUSTER_KIND
from together_provider.registry import VOLUME as VOLUME_KIND
from together_provider.stack_config import SETTINGS, ConfigError, load, project_values

REPO = Path(__file__).resolve().parents[2]
PROJECT = yaml.safe_load((REPO / "Pulumi.yaml").read_text())["name"]
STACK_FILES = sorted((REPO / "stacks").glob("Pulumi.*.yaml"))

DEFAULTS = {
    "region": "us-central-8",
    "gpuType": "H100_SXM",
    "cudaVersion": "12.8",
    "nvidiaDriverVersion": "570",
    "projectId": "proj",
}


def stack_values(path: Path) -> dict[str, Any]:
    """The program's own config keys of a stack file, without the namespace."""
    config = yaml.safe_load(path.read_text()).get("config", {})
    prefix = f"{PROJECT}:"
    return {k.removeprefix(prefix): v for k, v in config.items() if k.startswith(prefix)}


def problems(raw: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as error:
        load(raw)
    return error.value.problems


def test_there_is_a_stack_per_environment() -> None:
    assert [p.name for p in STACK_FILES] == [
        "Pulumi.dev.yaml",
        "Pulumi.prod.yaml",
        "Pulumi.staging.yaml",
    ]


@pytest.mark.parametrize("path", STACK_FILES, ids=lambda p: p.name)
def test_every_committed_stack_validates(path: Path) -> None:
    config = load(stack_values(path))
    assert config.resources["clusters"]


def test_prod_keeps_serving_off_preemptible_capacity() -> None:
    clusters = load(stack_values(REPO / "stacks" / "Pulumi.prod.yaml")).props(CLUSTER_KIND)
    assert clusters["serve"].get("num_preemptible_gpus", 0) == 0
    assert clusters["train"]["num_preemptible_gpus"] > clusters["train"]["num_gpus"]


def test_prod_shows_a_reserved_cluster_with_its_end_and_add_ons() -> None:
    research = load(stack_values(REPO / "stacks" / "Pulumi.prod.yaml")).props(CLUSTER_KIND)[
        "research"
    ]
    assert research["billing_type"] == "RESERVED"
    assert research["reservation_end_time"] == "2027-03-31T00:00:00Z"
    assert research["num_reserved_gpus"] == research["num_gpus"]
    assert research["cluster_config"]["observability"] == {"enabled": True}
    assert [a["name"] for a in research["add_ons"]] == ["dashboard"]


def test_a_nested_setting_is_checked_with_its_config_path() -> None:
    bad = {"numGpus": 8, "clusterConfig": {"observability": {"enabled": True}}}
    found = problems({"defaults": DEFAULTS, "clusters": {"train": bad}})
    assert found == [
        "clusters.train.clusterConfig: cluster_config has no 'load_balancer'; Together requires "
        "load_balancer in cluster_config"
    ]


def test_defaults_fill_every_cluster() -> None:
    config = load({"defaults": DEFAULTS, "clusters": {"a": {"numGpus": 8}, "b": {"numGpus": 16}}})
    props = config.props(CLUSTER_KIND)
    assert props["a"]["region"] == props["b"]["region"] == "us-central-8"
    assert props["b"]["num_gpus"] == 16


def test_a_bad_multiple_names_its_config_path() -> None:
    found = problems({"defaults": DEFAULTS, "clusters": {"train": {"numGpus": 12}}})
    assert found == [
        "clusters.train.numGpus: num_gpus=12 is not a multiple of 8; Together nodes have 8 GPUs "
        "each (use 8 or 16)"
    ]


def test_zero_standard_is_rejected() -> None:
    found = problems(
        {"defaults": DEFAULTS, "clusters": {"train": {"numGpus": 0, "numPreemptibleGpus": 8}}}
    )
    assert len(found) == 1
    assert found[0].startswith("clusters.train.numGpus: num_gpus=0 leaves no standard node")


def test_wrong_types_are_reported_not_coerced() -> None:
    found = problems({"defaults": DEFAULTS, "clusters": {"train": {"numGpus": "8"}}})
    assert found == [
        "clusters.train.numGpus: num_gpus='8' is a str; a GPU count is a whole number such as 8 "
        "(drop the quotes)"
    ]


def test_a_type_error_hides_no_other_problem_of_the_same_cluster() -> None:
    found = problems(
        {"defaults": DEFAULTS, "clusters": {"train": {"numGpus": "8", "gpuType": "H100"}}}
    )
    assert [p.split(":")[0] for p in found] == ["clusters.train.gpuType", "clusters.train.numGpus"]
    assert "did you mean 'H100_SXM'?" in found[0]
    assert "(drop the quotes)" in found[1]


def test_a_bad_default_is_reported_once_at_its_own_path() -> None:
    found = problems(
        {"defaults": DEFAULTS | {"gpuType": "A100"}, "clusters": {"a": {"numGpus": 8}, "b": {}}}
    )
    assert [p.split(":")[0] for p in found] == ["defaults.gpuType", "clusters.b.numGpus"]


@pytest.mark.parametrize(("key", "value"), [("clusterName", "shared"), ("adoptClusterId", "c-1")])
def test_defaults_cannot_set_what_identifies_one_cluster(key: str, value: str) -> None:
    found = problems(
        {
            "defaults": DEFAULTS | {key: value},
            "clusters": {"a": {"numGpus": 8}, "b": {"numGpus": 8}},
        }
    )
    assert len(found) == 1
    assert found[0].startswith(f"defaults.{key}: identifies one cluster, so it cannot be a default")
    assert f"clusters.<name>.{key}" in found[0]


def test_two_clusters_may_not_share_a_cluster_name() -> None:
    found = problems(
        {
            "defaults": DEFAULTS,
            "clusters": {"a": {"numGpus": 8}, "b": {"numGpus": 8, "clusterName": "a"}},
        }
    )
    assert found == [
        "clusters.b.clusterName: 'a' is also the cluster name of clusters.a; two resources would "
        "manage one Together cluster, and destroying either deletes it (give each cluster its own "
        "cluster name)"
    ]


def test_two_clusters_may_not_adopt_the_same_cluster() -> None:
    found = problems(
        {
            "defaults": DEFAULTS,
            "clusters": {
                "a": {"numGpus": 8, "adoptClusterId": "c-1"},
                "b": {"numGpus": 8, "adoptClusterId": "c-1"},
            },
        }
    )
    assert [p.split(":")[0] for p in found] == ["clusters.b.adoptClusterId"]


def test_unknown_keys_suggest_the_right_one() -> None:
    found = problems({"defaults": DEFAULTS, "clusters": {"train": {"numGpu": 8}}})
    assert found == ["clusters.train.numGpu: unknown key; did you mean 'numGpus'?"]


def test_missing_required_keys_are_listed() -> None:
    found = problems({"clusters": {"train": {"numGpus": 8}}})
    fields = {p.split(":")[0] for p in found}
    assert {
        "clusters.train.region",
        "clusters.train.gpuType",
        # the driver (by catalogue id, or the CUDA pair): each missing half of the pair
        "clusters.train.cudaVersion",
        "clusters.train.nvidiaDriverVersion",
    } <= fields


def test_missing_clusters_map_is_one_clear_problem() -> None:
    assert problems({"defaults": DEFAULTS})[0].startswith("clusters: required")


def test_every_problem_of_every_cluster_is_listed_at_once() -> None:
    found = problems(
        {
            "defaults": DEFAULTS,
            "clusters": {
                "a": {"numGpus": 12},
                "b": {"numGpus": "x"},
                "c": {"numGpus": 8, "numPreemptibleGpus": 8, "clusterType": "SLURM"},
            },
        }
    )
    assert [p.split(":")[0] for p in found] == [
        "clusters.a.numGpus",
        "clusters.b.numGpus",
        "clusters.c.numPreemptibleGpus",
    ]


def test_the_error_message_lists_problems_and_the_fix() -> None:
    with pytest.raises(ConfigError) as error:
        load({"defaults": DEFAULTS, "clusters": {"train": {"numGpus": 12}}})
    text = str(error.value)
    assert "nothing was created or changed" in text
    assert "  - clusters.train.numGpus" in text
    assert "pulumi config set --path" in text


def test_a_misspelt_top_level_key_is_caught_though_pulumi_accepts_it() -> None:
    found = problems({"defualts": DEFAULTS, "clusters": {"train": {"numGpus": 8}}})
    assert found[0] == "defualts: unknown key; did you mean 'defaults'?"


def test_project_values_keep_only_the_programs_namespace_and_parse_json() -> None:
    raw = {
        f"{PROJECT}:clusters": '{"train": {"numGpus": 8}}',
        f"{PROJECT}:note": "plain text",
        "together:apiKey": "secret",
    }
    assert project_values(PROJECT, raw) == {
        "clusters": {"train": {"numGpus": 8}},
        "note": "plain text",
    }


def test_the_config_keys_come_from_the_field_table() -> None:
    assert dict(SETTINGS) == {f.config_key: f.name for f in CLUSTER.inputs if f.config_key}
    assert SETTINGS["numPreemptibleGpus"] == "num_preemptible_gpus"


# --- shared volumes -------------------------------------------------------------------------------


def test_a_cluster_attaches_a_volume_of_the_stack_which_inherits_region_and_project() -> None:
    stack = load(
        {
            "defaults": DEFAULTS,
            "volumes": {"ckpt": {"sizeTib": 4}},
            "clusters": {"train": {"numGpus": 8, "volume": "ckpt"}},
        }
    )
    assert stack.props(VOLUME_KIND) == {
        "ckpt": {"region": "us-central-8", "project_id": "proj", "size_tib": 4}
    }
    assert stack.attached["clusters"]["volumes"] == {"train": "ckpt"}
    assert "volume" not in stack.props(CLUSTER_KIND)["train"]


def test_every_volume_problem_is_listed_at_once() -> None:
    found = problems(
        {
            "defaults": DEFAULTS,
            "volumes": {
                "ckpt": {"sizeTib": 0},
                "far": {"sizeTib": 1, "region": "us-west-2"},
                "typo": {"sizeTb": 1},
            },
            "clusters": {
                "train": {"numGpus": 8, "volume": "far"},
                "eval": {"numGpus": 8, "volume": "nope"},
                "both": {"numGpus": 8, "volume": "ckpt", "volumeId": "vol-1"},
            },
        }
    )
    assert found == [
        "volumes.ckpt.sizeTib: size_tib=0 is below Together's minimum; a volume is at least 1 TiB "
        "(size_tib >= 1)",
        "volumes.typo.sizeTb: unknown key; did you mean 'sizeTib'?",
        "clusters.train.volume: volume 'far' is in 'us-west-2' but the cluster is in "
        "'us-central-8'; Together attaches only a volume of the cluster's own region (put both "
        "in one region)",
        "clusters.eval.volume: 'nope' is not a key of `volumes` (ckpt, far, typo); declare it "
        "under volumes.nope or name one of those",
        "clusters.both.volume: set either volume (a volume of this stack) or volumeId (an "
        "existing volume's id), not both",
    ]


def test_the_dev_stack_trains_on_a_checkpoint_volume() -> None:
    stack = load(stack_values(REPO / "stacks" / "Pulumi.dev.yaml"))
    assert stack.attached["clusters"]["volumes"] == {"train": "checkpoints"}
    assert (
        stack.props(VOLUME_KIND)["checkpoints"]["region"]
        == stack.props(CLUSTER_KIND)["train"]["region"]
    )


def test_a_declared_range_in_stack_config_and_a_bad_ceiling_at_its_path() -> None:
    burst = {"numGpus": 8, "numPreemptibleGpus": 8, "maxPreemptibleGpus": 32}
    props = load({"defaults": DEFAULTS, "clusters": {"burst": burst}}).props(CLUSTER_KIND)["burst"]
    assert (props["num_preemptible_gpus"], props["max_preemptible_gpus"]) == (8, 32)
    found = problems(
        {"defaults": DEFAULTS, "clusters": {"burst": {**burst, "maxPreemptibleGpus": 4}}}
    )
    assert found == [
        "clusters.burst.maxPreemptibleGpus: max_preemptible_gpus=4 is not a multiple of 8; "
        "Together nodes have 8 GPUs each (use 8)"
    ]
