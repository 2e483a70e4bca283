"""A burst of reclaims while `pulumi up` runs causes no error and no spurious diff: reclaims move
`allocated_preemptible_gpus`, an output, never the declared target."""

from __future__ import annotations

from pulumi import automation as auto

from testkit.pulumi_env import PulumiEnv
from testkit.sim import SimulatorProcess
from testkit.wait import wait_for
from tests.clusters import (
    CLUSTER_TYPE,
    cluster_stack,
    live_clusters,
    set_clusters,
    successful_posts,
)
from tests.reliability.helpers import UP, on_engine, start_cli
from tests.specs import CLUSTER_SPEC as BASE

# 360 simulated seconds of provisioning take 3 s: the reclaims land while `up` creates "eval".
pytestmark = on_engine(120)


def test_reclaims_during_an_update_cause_no_error_and_no_diff(
    pulumi_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    train = {**BASE, "num_preemptible_gpus": 24}
    stack, work = cluster_stack(pulumi_env, simulator, {"train": train})
    cluster_id = stack.up().outputs["train_id"].value
    simulator.advance(900)  # fill the preemptible target
    (filled,) = live_clusters(simulator)
    assert filled.allocated_preemptible_gpus == 24

    # One up that changes train's target in place and creates eval, which takes a while.
    set_clusters(stack, {"train": {**train, "num_preemptible_gpus": 32}, "eval": dict(BASE)})
    up = start_cli(pulumi_env, work, *UP, "test")
    wait_for(lambda: successful_posts(simulator) == 2, timeout=60, what="eval's POST")
    reclaimed = [node for _ in range(3) for node in simulator.reclaim(cluster_id, nodes=1)]
    assert up.poll() is None, "the reclaims must land while up is still running"
    output, _ = up.communicate(timeout=120)
    assert up.returncode == 0, output
    assert len(reclaimed) == 3

    refresh = stack.refresh()
    assert refresh.summary.resource_changes == {"same": 3}
    assert stack.preview().change_summary == {auto.OpType.SAME: 3}
    (outputs,) = [
        r["outputs"]
        for r in pulumi_env.exported_state(work)["deployment"]["resources"]
        if r["type"] == CLUSTER_TYPE and r["id"] == cluster_id
    ]
    assert outputs["num_preemptible_gpus"] == 32
    assert outputs["desired_preemptible_gpus"] == 32
    assert {e["node_id"] for e in outputs["preemption_events"]} == set(reclaimed)
