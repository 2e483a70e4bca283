"""The policy pack's checks as pure functions over resources' inputs (no engine, no pulumi-policy).

The engine tests (tests/integration/test_policy_pack.py) run the same checks through the pack.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.specs import CLUSTER_SPEC
from together_policy import clusters, workloads
from together_policy.pack import BY_NAME, POLICIES
from together_policy.provider import CLUSTER_TOKEN, CLUSTER_TYPE, VOLUME_TOKEN, VOLUME_TYPE, Unknown
from together_policy.resources import (
    CRON_JOB,
    DEPLOYMENT,
    JOB,
    POD,
    POD_DISRUPTION_BUDGET,
    Res,
    with_unknowns,
)
from together_provider.kubernetes.placement import off_preemptible, on_preemptible

# Placed as the provider's helpers place a pod: the pack must accept what they write.
PREEMPTIBLE = on_preemptible({})
OFF = off_preemptible({})  # required node affinity compute-class NotIn [preemptible]
CONTAINER = {"name": "main", "image": "busybox"}
DURABLE = {  # on preemptible nodes, with a checkpoint mount of a PersistentVolumeClaim
    **PREEMPTIBLE,
    "volumes": [{"name": "ckpt", "persistentVolumeClaim": {"claimName": "c"}}],
    "containers": [{**CONTAINER, "volumeMounts": [{"name": "ckpt", "mountPath": "/ckpt"}]}],
}


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p.title() for p in rest)


def cluster(name: str = "train", native: bool = False, **fields: Any) -> Res:
    props = {**CLUSTER_SPEC, "cluster_name": name, **fields}
    if native:
        return Res(CLUSTER_TOKEN, f"urn:{name}", name, {_camel(k): v for k, v in props.items()})
    return Res(CLUSTER_TYPE, f"urn:{name}", name, {"__provider": "x", **props})


def workload(kind: str, name: str = "w", spec: dict[str, Any] | None = None, **extra: Any) -> Res:
    pod = {
        "metadata": {"labels": {"app": name}},
        "spec": {"containers": [CONTAINER], **(spec or {})},
    }
    job = {"template": pod, **extra}
    body: dict[str, Any] = {
        POD: pod,
        DEPLOYMENT: {"metadata": {}, "spec": {"template": pod}},
        JOB: {"metadata": {}, "spec": job},
        CRON_JOB: {"metadata": {}, "spec": {"schedule": "@daily", "jobTemplate": {"spec": job}}},
    }[kind]
    return Res(kind, f"urn:{name}", name, body)


@pytest.mark.parametrize("native", [False, True])
def test_cluster_rules_on_both_hosts(native: bool) -> None:
    assert clusters.cluster_rules(cluster(native=native)) == []
    bad = cluster(native=native, num_gpus=0, num_preemptible_gpus=12)
    messages = [v.message for v in clusters.cluster_rules(bad)]
    assert any("num_gpus=0 leaves no standard node" in m for m in messages)
    assert any("num_preemptible_gpus=12 is not a multiple of 8" in m for m in messages)
    assert all(m.startswith("Cluster 'train' (num_") for m in messages)
    assert not any("cluster 'train'" in m for m in messages)  # named once


def test_cluster_rules_skip_unknowns() -> None:
    assert clusters.cluster_rules(cluster(num_gpus=Unknown.VALUE, project_id=None)) == []


def test_slurm_and_project_rules_are_the_providers() -> None:
    slurm = cluster(cluster_type="SLURM", num_preemptible_gpus=8)
    assert any("SLURM" in v.message for v in clusters.cluster_rules(slurm))
    no_project = cluster(num_preemptible_gpus=8, project_id=None)
    assert any("requires a project" in v.message for v in clusters.cluster_rules(no_project))


def test_budget_caps_each_total_and_the_hourly_cost() -> None:
    stack = [cluster("a", num_gpus=16, num_preemptible_gpus=8), cluster("b", native=True)]
    assert clusters.budget(stack, clusters.Budget(24, 8, 1000.0)) == []
    over = clusters.budget(stack, clusters.Budget(16, 0, 10.0))
    assert [v.urn for v in over] == [None, None, None]
    text = " ".join(v.message for v in over)
    assert "num_gpus=24 standard GPUs in total, above the cap maxStandardGpus=16" in text
    assert "num_preemptible_gpus=8 preemptible GPUs in total, above the cap" in text
    # 24 standard + 8 preemptible at 50% of the H100 rate (prices.json)
    assert "cost an estimated $83.72/h" in text


def test_budget_counts_no_unknown_cluster() -> None:
    stack = [cluster("a", num_gpus=Unknown.VALUE)]
    assert clusters.budget(stack, clusters.Budget(max_standard_gpus=0)) == []


def _volume(native: bool, independent: bool) -> Res:
    key = "isLifecycleIndependent" if native else "is_lifecycle_independent"
    return Res(VOLUME_TOKEN if native else VOLUME_TYPE, "urn:vol", "ckpt", {key: independent})


@pytest.mark.parametrize("native", [False, True])
def test_volume_of_a_preemptible_cluster_is_lifecycle_independent(native: bool) -> None:
    user = Res(
        CLUSTER_TOKEN if native else CLUSTER_TYPE,
        "urn:train",
        "train",
        {"numPreemptibleGpus" if native else "num_preemptible_gpus": 8, "volumeId": Unknown.VALUE},
        {"volumeId": ("urn:vol",)},
    )
    (found,) = clusters.volume_lifecycle_independent([user, _volume(native, False)])
    assert found.urn == "urn:vol"
    assert "is_lifecycle_independent=False" in found.message and "'train'" in found.message
    assert clusters.volume_lifecycle_independent([user, _volume(native, True)]) == []
    standard_only = Res(user.type, user.urn, user.name, {}, user.depends_on)
    assert clusters.volume_lifecycle_independent([standard_only, _volume(native, False)]) == []


def test_grace_period_only_where_a_pod_can_land_on_preemptible() -> None:
    long = {"terminationGracePeriodSeconds": 600}
    (found,) = workloads.grace_period(workload(DEPLOYMENT, spec=long))
    assert (
        "terminationGracePeriodSeconds=600 is longer than the 300 s drain window" in found.message
    )
    assert "fix: set terminationGracePeriodSeconds <= 300" in found.message
    assert workloads.grace_period(workload(DEPLOYMENT, spec={**long, **OFF})) == []
    assert workloads.grace_period(workload(POD, spec={"terminationGracePeriodSeconds": 300})) == []


def test_critical_label_keeps_a_workload_off_preemptible() -> None:
    marked = workload(DEPLOYMENT, spec=PREEMPTIBLE)
    marked.props["metadata"]["labels"] = {workloads.CRITICAL_LABEL: "true"}
    (found,) = workloads.critical_off_preemptible(marked)
    assert "is critical (label together.ai/critical" in found.message
    assert "selects preemptible nodes" in found.message
    fixed = workload(DEPLOYMENT, spec=OFF)
    fixed.props["metadata"]["labels"] = {workloads.CRITICAL_LABEL: "true"}
    assert workloads.critical_off_preemptible(fixed) == []
    assert workloads.critical_off_preemptible(workload(DEPLOYMENT, spec=PREEMPTIBLE)) == []


def test_disruption_budget_makes_a_workload_critical() -> None:
    budget = Res(
        POD_DISRUPTION_BUDGET,
        "urn:pdb",
        "pdb",
        {"spec": {"selector": {"matchLabels": {"app": "w"}}}},
    )
    (found,) = workloads.disruption_budget_off_preemptible([budget, workload(DEPLOYMENT)])
    assert "PodDisruptionBudget 'pdb' selects its pods" in found.message
    assert "may land on a preemptible node" in found.message
    assert (
        workloads.disruption_budget_off_preemptible([budget, workload(DEPLOYMENT, spec=OFF)]) == []
    )
    assert workloads.disruption_budget_off_preemptible([budget, workload(DEPLOYMENT, "x")]) == []


@pytest.mark.parametrize("kind", [JOB, CRON_JOB])
def test_preemptible_job_needs_failure_policy_and_checkpoint_mount(kind: str) -> None:
    found = workloads.preemptible_job_checkpoints(workload(kind, spec=PREEMPTIBLE))
    assert [("podFailurePolicy" in v.message, "checkpoint volume" in v.message) for v in found] == [
        (True, False),
        (False, True),
    ]
    policy = {"rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]}
    good = workload(kind, spec=DURABLE, podFailurePolicy=policy)
    assert workloads.preemptible_job_checkpoints(good) == []
    assert workloads.preemptible_job_checkpoints(workload(kind)) == []  # not on preemptible


@pytest.mark.parametrize("kind", [JOB, CRON_JOB])
@pytest.mark.parametrize(
    "rules",
    [
        [{"action": "FailJob", "onPodConditions": [{"type": "DisruptionTarget"}]}],
        [{"action": "Count", "onPodConditions": [{"type": "DisruptionTarget"}]}],
        [  # Ignore, but of another condition: a reclaimed pod still counts
            {"action": "Ignore", "onPodConditions": [{"type": "ConfigIssue"}]},
            {"action": "Count", "onPodConditions": [{"type": "DisruptionTarget"}]},
        ],
    ],
    ids=["FailJob", "Count", "Ignore-other-condition"],
)
def test_a_rule_naming_disruption_target_must_ignore_it(kind: str, rules: list[Any]) -> None:
    """Naming DisruptionTarget is not enough: FailJob or Count still fails the Job on reclaims."""
    job = workload(kind, spec=DURABLE, podFailurePolicy={"rules": rules})
    (found,) = workloads.preemptible_job_checkpoints(job)
    assert "podFailurePolicy has no rule ignoring pods with the DisruptionTarget" in found.message
    assert f"'action': '{rules[-1]['action']}'" in found.message  # the value, as written


def _running(kind: str, command: list[Any], args: list[Any] | None = None, **spec: Any) -> Res:
    container = {**CONTAINER, "command": command, **({"args": args} if args else {})}
    return workload(kind, "train", spec={**DURABLE, "containers": [container], **spec})


@pytest.mark.parametrize("kind", [JOB, CRON_JOB])
@pytest.mark.parametrize(
    ("command", "args", "wrapper"),
    [
        (["sh", "-c", "python prep.py; python train.py"], None, "sh -c with 2 commands"),
        (["/bin/bash", "-ec"], ["cd /w\npython train.py && echo done"], "bash -ec with 3"),
        (["sh"], ["-c", "python train.py | tee log"], "sh -c with 2 commands"),
    ],
)
def test_a_preemptible_job_wrapped_in_a_shell_is_advised_the_launcher(
    kind: str, command: list[str], args: list[str] | None, wrapper: str
) -> None:
    (found,) = workloads.preemptible_job_shell_wrapper(_running(kind, command, args))
    assert found.urn == "urn:train" and f"({wrapper}" in found.message
    assert "as PID 1 the shell does not pass SIGTERM on" in found.message
    assert "fix: run it under the launcher" in found.message
    assert "[python, -m, together_worker, run, --, <the same command>]" in found.message


@pytest.mark.parametrize(
    "command",
    [
        ["sh", "-c", "python train.py"],  # one command: the shell execs it
        ["sh", "-c", "pip install -r r.txt && exec python train.py"],  # exec: python is PID 1
        ["python", "-m", "together_worker", "run", "--", "sh", "-c", "a; b"],  # the launcher
        ["sh", "-c", "trap 'kill -TERM $P' TERM; python t.py & P=$!; wait $P"],  # it forwards
        ["sh", "-c", "echo 'one; string'"],
        ["python", "train.py", "-c", "a; b"],
        ["sh", "-c", "unbalanced 'quote; b"],  # does not parse: no guess
        ["sh", "-c", Unknown.VALUE],  # known only after apply
    ],
)
def test_what_is_not_a_signal_swallowing_shell(command: list[Any]) -> None:
    assert workloads.preemptible_job_shell_wrapper(_running(JOB, command)) == []


def test_the_shell_wrapper_check_is_for_preemptible_jobs_only() -> None:
    wrapped = {"command": ["sh", "-c", "a; b"]}
    on_standard = workload(JOB, spec={**OFF, "containers": [{**CONTAINER, **wrapped}]})
    a_deployment = workload(
        DEPLOYMENT, spec={**PREEMPTIBLE, "containers": [{**CONTAINER, **wrapped}]}
    )
    assert workloads.preemptible_job_shell_wrapper(on_standard) == []
    assert workloads.preemptible_job_shell_wrapper(a_deployment) == []
    assert BY_NAME["preemptible-job-shell-wrapper"].level == "advisory"


def test_unconstrained_workload_on_a_preemptible_stack_is_advised() -> None:
    free, placed = workload(POD, "free"), workload(POD, "placed", spec=PREEMPTIBLE)
    (found,) = workloads.unconstrained_compute_class(
        [cluster(num_preemptible_gpus=8), free, placed]
    )
    assert found.urn == "urn:free" and "no together.ai/compute-class constraint" in found.message
    assert workloads.unconstrained_compute_class([cluster(), free]) == []


def test_unknown_sentinels_become_unknown() -> None:
    props = with_unknowns({"a": ["04da6b54-80e4-46f7-96ec-b56ff0331ba9"], "b": 1})
    assert props == {"a": [Unknown.VALUE], "b": 1}


def test_whole_numbers_from_the_engine_are_ints() -> None:
    spec = with_unknowns({"spec": {"terminationGracePeriodSeconds": 600.0, "x": 0.5}})["spec"]
    assert spec == {"terminationGracePeriodSeconds": 600, "x": 0.5}
    assert type(spec["terminationGracePeriodSeconds"]) is int
    (found,) = workloads.grace_period(Res(POD, "urn:p", "p", {"spec": spec}))
    assert "terminationGracePeriodSeconds=600 is longer" in found.message


def test_every_policy_is_named_described_and_leveled() -> None:
    assert len(BY_NAME) == len(POLICIES) == 10
    for policy in POLICIES:
        assert policy.description and policy.level in ("advisory", "mandatory")
        assert (policy.resource_check is None) != (policy.stack_check is None)


def test_a_placement_not_known_at_preview_is_not_guessed() -> None:
    computed = workload(DEPLOYMENT, spec={"nodeSelector": Unknown.VALUE})
    computed.props["metadata"]["labels"] = {workloads.CRITICAL_LABEL: "true"}
    assert workloads.critical_off_preemptible(computed) == []
    stack = [cluster(num_preemptible_gpus=8), computed]
    assert workloads.unconstrained_compute_class(stack) == []


@pytest.mark.parametrize("native", [False, True])
def test_budget_prices_a_declared_range_at_its_ceiling(native: bool) -> None:
    """What an autoscaler may reach without a diff is what the budget must allow."""
    ranged = cluster(native=native, num_preemptible_gpus=8, max_preemptible_gpus=32)
    auto = cluster("b", native=native, auto_scale=True, auto_scale_max_gpus=24)
    assert clusters.budget([ranged, auto], clusters.Budget(32, 32, 1000.0)) == []
    over = " ".join(v.message for v in clusters.budget([ranged, auto], clusters.Budget(31, 31)))
    assert "num_gpus=32 standard GPUs in total, above the cap maxStandardGpus=31" in over
    assert "num_preemptible_gpus=32 preemptible GPUs in total, above the cap" in over
    assert "max_preemptible_gpus counted where set" in over
    # 8 + 24 standard and 32 preemptible at 50% of the H100 rate (prices.json): the ceilings
    [cost] = clusters.budget([ranged, auto], clusters.Budget(max_usd_per_hour=1.0))
    assert "cost an estimated $143.52/h" in cost.message  # 32 x 2.99 + 32 x 1.495


def test_budget_takes_the_stacks_own_rates_and_says_when_it_priced_at_placeholders() -> None:
    stack = [cluster("a", num_gpus=16, num_preemptible_gpus=8)]
    # At prices.json's placeholder H100 rate: 16 x 2.99 + 8 x 1.495.
    [at_file] = clusters.budget(stack, clusters.Budget(max_usd_per_hour=50.0))
    assert "$59.80/h" in at_file.message and "PLACEHOLDER rates" in at_file.message
    assert "or give the real rates with pricesPerGpuHour in this stack's policy" in at_file.message
    # The stack's own rate, from the policy config: 16 x 2 + 8 x 1.
    own: dict[str, Any] = {"pricesPerGpuHour": {"H100_SXM": 2}}
    assert clusters.budget(stack, clusters.Budget.from_config({**own, "maxUsdPerHour": 40})) == []
    [over] = clusters.budget(stack, clusters.Budget.from_config({**own, "maxUsdPerHour": 39}))
    assert "$40.00/h" in over.message
    assert "rates from the policy config's pricesPerGpuHour" in over.message
    assert "PLACEHOLDER" not in over.message and "give the real rates" not in over.message
    # Each GPU type says where its rate came from.
    mixed = [*stack, cluster("b", gpu_type="H200_SXM")]
    [both] = clusters.budget(mixed, clusters.Budget.from_config({**own, "maxUsdPerHour": 1}))
    assert "rates from the policy config's pricesPerGpuHour for H100_SXM; for H200_SXM: " in (
        both.message
    )
    # A rate the pack cannot use is a violation that names the key and the fix, not a crash.
    bad = {"pricesPerGpuHour": {"H100": 2}, "maxUsdPerHour": 1}
    [refused] = clusters.budget(stack, clusters.Budget.from_config(bad))
    assert refused.message.startswith("the policy config's pricesPerGpuHour: unknown GPU type")
    assert "(fix: use one of H100_SXM" in refused.message


NOW = datetime(2027, 3, 25, tzinfo=UTC)
ENDING: dict[str, Any] = {
    "billing_type": "RESERVED",
    "duration_days": 90,
    "reservation_end_time": "2027-03-31T00:00:00Z",
}


@pytest.mark.parametrize("native", [False, True])
def test_a_reservation_ending_within_the_days_left_is_flagged(native: bool) -> None:
    ending = cluster(native=native, **ENDING)
    (found,) = clusters.reservation_ends_soon([ending], 7, NOW)
    assert found.message.startswith(
        "Cluster 'train': reservation_end_time='2027-03-31T00:00:00Z' ends in 6.0 days, less "
        "than 7 days from now; Together decommissions the cluster"
    )
    assert "fix: extend reservation_end_time" in found.message
    assert clusters.reservation_ends_soon([ending], 6, NOW) == []


def test_an_ended_far_or_unknown_reservation() -> None:
    ended = cluster(reservation_end_time="2027-03-01T00:00:00Z")
    (found,) = clusters.reservation_ends_soon([ended], 7, NOW)
    assert "has ended" in found.message
    far = cluster(reservation_end_time="2027-06-01T00:00:00Z")
    unknown = cluster(reservation_end_time=Unknown.VALUE)
    plain = cluster()
    assert clusters.reservation_ends_soon([far, unknown, plain], 7, NOW) == []


def test_the_reservation_policy_is_advisory_with_its_days_configurable() -> None:
    policy = BY_NAME["reservation-end-ahead"]
    assert policy.level == "advisory"
    assert clusters.MIN_DAYS_LEFT in policy.config


def test_the_reservation_policy_reads_its_days_from_the_config_and_defaults_to_seven() -> None:
    check = BY_NAME["reservation-end-ahead"].stack_check
    assert check is not None
    # Ten days ahead of the clock the pack reads (days apart from any test's run time).
    end = (datetime.now(UTC) + timedelta(days=10)).strftime("%Y-%m-%dT%H:%M:%SZ")
    stack = [cluster(**{**ENDING, "reservation_end_time": end})]
    assert check(stack, {}) == []
    (found,) = check(stack, {clusters.MIN_DAYS_LEFT: 14})
    assert "less than 14 days from now" in found.message
