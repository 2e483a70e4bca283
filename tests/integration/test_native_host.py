"""What only the native plugin does, through the real engine: progress on the resource and counts
typed by its schema, `pulumi import` (clusters and volumes), customTimeouts, and one `pulumi up`
waiting on a dozen clusters at once. What both hosts do is in scenarios/ (one suite, run on each).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from pulumi import automation as auto

from testkit.pulumi_env import PulumiEnv
from testkit.sim import SimulatorProcess
from tests.clusters import live_clusters
from tests.hosts import HOSTS
from tests.native import CLUSTER_TOKEN, VOLUME_TOKEN, native_stack
from tests.specs import CLUSTER_SPEC as BASE
from together_api.client import TogetherClient
from together_api.wire import ClusterCreateRequest, VolumeCreateRequest

pytestmark = pytest.mark.engine
FAST = {"time_scale": 600}  # 6 simulated minutes of provisioning = 0.6 s


def _timeouts(stack: auto.Stack, **seconds: float) -> None:
    stack.set_config("timeouts", auto.ConfigValue(json.dumps(seconds)))


@pytest.mark.parametrize("simulator", [FAST], indirect=True)
def test_create_reports_progress_on_the_cluster_and_counts_as_ints(
    native_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    stack, _ = native_stack(native_env, simulator, {"train": {**BASE, "num_preemptible_gpus": 16}})
    events: list[auto.EngineEvent] = []
    outputs = stack.up(on_event=events.append).outputs
    assert outputs["train_int_counts"].value == "int"  # not 8.0: the declared type casts it
    progress = [
        (e.diagnostic_event.urn or "", e.diagnostic_event.message)
        for e in events
        if e.diagnostic_event is not None
    ]
    cluster_id = outputs["train_id"].value
    created = [urn for urn, message in progress if "created " + cluster_id in message]
    assert created, progress
    assert created[0].endswith("together:index:Cluster::train")  # the cluster's, not the Stack's


@pytest.mark.parametrize("simulator", [FAST], indirect=True)
def test_import_then_the_matching_program_previews_no_changes(
    native_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    spec: dict[str, Any] = {**BASE, "num_preemptible_gpus": 8}
    with TogetherClient(api_key=simulator.api_key, base_url=simulator.base_url) as client:
        existing = client.create_cluster(
            ClusterCreateRequest.model_validate(
                {**spec, "cluster_name": "train", "billing_type": "ON_DEMAND"}
            )
        )
    simulator.advance(600)
    stack, work = native_stack(native_env, simulator, {"train": spec})
    simulator.reset_requests()
    imported = native_env.run(
        work, "import", CLUSTER_TOKEN, "train", existing.cluster_id,
        "--yes", "--generate-code=false", "--stack", "test",
    )  # fmt: skip
    assert "1 imported" in imported.stdout, imported.stdout + imported.stderr
    # An import only reads: the engine reads the resource twice, and each read is one GET (the
    # lifecycle's own read fills the inputs; a separate GET of the live object doubled it).
    calls = [(r["method"], r["path"]) for r in simulator.requests()]
    assert calls == [("GET", "/v1/compute/clusters/{cluster_id}")] * 2
    preview = stack.preview()
    assert preview.change_summary == {auto.OpType.SAME: 2}
    result = stack.up()
    assert result.outputs["train_id"].value == existing.cluster_id
    assert [c.cluster_id for c in live_clusters(simulator)] == [existing.cluster_id]


@pytest.mark.parametrize("simulator", [FAST], indirect=True)
def test_import_of_an_unknown_id_fails_and_changes_nothing(
    native_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    _, work = native_stack(native_env, simulator, {"train": BASE})
    failed = native_env.run(
        work, "import", CLUSTER_TOKEN, "train", "no-such-cluster", "--yes",
        "--generate-code=false", "--stack", "test", check=False,
    )  # fmt: skip
    assert failed.returncode != 0
    assert "does not exist" in failed.stdout + failed.stderr
    assert live_clusters(simulator) == []


@pytest.mark.parametrize("simulator", [FAST], indirect=True)
def test_custom_timeouts_bound_the_create_in_place_of_ready_timeout_seconds(
    native_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    # ready_timeout_seconds alone would give up long before the 0.6 s of provisioning ...
    stack, _ = native_stack(
        native_env, simulator, {"train": {**BASE, "ready_timeout_seconds": 0.01}}
    )
    # ready_timeout_seconds bounds a delete too (every kind's): the delete customTimeout wins there.
    _timeouts(stack, create=120, delete=120)
    assert stack.up().outputs["train_status"].value == "Ready"  # ... the customTimeout wins
    stack.destroy()
    # And a customTimeout shorter than provisioning stops the create, leaving nothing billing.
    _timeouts(stack, create=0.1)
    with pytest.raises(auto.CommandError) as failed:
        stack.up()
    assert "was not Ready in time" in str(failed.value)
    assert "was deleted so nothing is left billing" in str(failed.value)
    assert live_clusters(simulator) == []


CONCURRENT = 12
PROVISIONING_S = 360.0  # simulated seconds (the simulator's default)


@pytest.mark.parametrize("simulator", [{"time_scale": 60}], indirect=True)
def test_twelve_creates_wait_side_by_side(
    native_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    """All twelve clusters are created before the first is Ready: no host-side ceiling (the
    dynamic host runs four at a time, so its fifth POST would come after a whole provisioning)."""
    clusters = {f"c{i:02d}": BASE for i in range(CONCURRENT)}
    stack, _ = native_stack(native_env, simulator, clusters)
    result = stack.up(parallel=64)
    assert result.summary.resource_changes == {"create": CONCURRENT + 1}
    created = sorted(c.created_at for c in live_clusters(simulator) if c.created_at)
    assert len(created) == CONCURRENT
    spread = (created[-1] - created[0]).total_seconds()
    assert spread < PROVISIONING_S, f"the last create started {spread} s after the first"


@pytest.mark.parametrize("simulator", [FAST], indirect=True)
def test_import_of_a_volume_then_the_matching_program_previews_no_changes(
    native_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    ckpt: dict[str, Any] = {"region": "us-central-8", "size_tib": 2, "project_id": "proj-test"}
    with TogetherClient(api_key=simulator.api_key, base_url=simulator.base_url) as client:
        existing = client.create_volume(VolumeCreateRequest(volume_name="ckpt", **ckpt))
    simulator.advance(120)
    native = HOSTS["native"]
    stack = native.volume_stack(native_env, simulator, {"ckpt": ckpt})
    simulator.reset_requests()
    imported = native_env.run(
        native.volume_work(native_env), "import", VOLUME_TOKEN, "ckpt", existing.volume_id,
        "--yes", "--generate-code=false", "--stack", "test",
    )  # fmt: skip
    assert "1 imported" in imported.stdout, imported.stdout + imported.stderr
    assert {r["method"] for r in simulator.requests()} == {"GET"}  # import only reads
    # Together does not report a volume's region or project: the program's are taken, not
    # shown as a replacement.
    assert stack.preview().change_summary == {auto.OpType.SAME: 2}
    result = stack.up()
    assert result.summary.resource_changes == {"same": 2}
    assert result.outputs["ckpt_volume_id"].value == existing.volume_id
    # The first real change is an ordinary in-place grow of the imported volume.
    stack.set_config("volumes", auto.ConfigValue(json.dumps({"ckpt": {**ckpt, "size_tib": 3}})))
    simulator.reset_requests()
    assert stack.up().summary.resource_changes == {"update": 1, "same": 1}
    assert [(r["method"], r["path"]) for r in simulator.requests()] == [
        ("PUT", "/v1/compute/clusters/storage/volumes")
    ]
    (stored,) = native.stored_volumes(native_env)
    assert (stored["region"], stored["project_id"]) == ("us-central-8", "proj-test")
    assert "__unread" not in stored  # the update stored the program's values
