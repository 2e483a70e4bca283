"""`pulumi up` killed mid-create, then the recovery a user does, ends with exactly the declared
clusters: no duplicate, no orphan.

Two kills, because the engine starts the language host and the provider in process groups of
their own: SIGKILL of the CLI's process group leaves the provider running, orphaned.
- Everything killed (the machine or CI container dies): the recovery below is deterministic.
- Only the CLI's group killed: the orphaned provider carries on with the create, and must not
  delete the cluster (it is what the user adopts).

What this engine (v3.274.1, file backend) does after a SIGKILL, found by these tests:
- the stack stays locked: every command fails until `pulumi cancel` removes the lock;
- the state holds a pending *create* for the cluster, but no resource; a non-interactive
  `pulumi refresh` keeps it (only `--clear-pending-creates` or the interactive prompt clears it);
- the cluster exists at Together, so the next `up` would create it again: the provider refuses
  the duplicate name and names the fix, `adopt_cluster_id=<id>`.

The user's recovery, step by step (docs/troubleshooting.md quotes it):
1. `pulumi cancel --yes`
2. `pulumi refresh --clear-pending-creates --yes`
3. `pulumi up` fails with "a cluster with this name already exists (<id>) ... take it over with
   adopt_cluster_id='<id>'"; set that in the cluster's args;
4. `pulumi up` adopts the cluster (no second POST).
"""

from __future__ import annotations

import contextlib
import re

import pytest
from pulumi import automation as auto

from testkit.pulumi_env import PulumiEnv
from testkit.sim import SimulatorProcess
from testkit.wait import wait_for
from tests.clusters import (
    cluster_stack,
    live_clusters,
    pending_operations,
    set_clusters,
    state_clusters,
    successful_posts,
)
from tests.reliability.helpers import (
    UP,
    kill_group,
    kill_session,
    on_engine,
    start_cli,
    up_past_create,
)
from tests.specs import CLUSTER_SPEC as BASE

# 360 simulated seconds of provisioning take 12 s: the kill lands while create polls.
pytestmark = on_engine(30)


def test_killed_create_recovers_to_exactly_the_declared_cluster(
    pulumi_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    stack, work, up = up_past_create(pulumi_env, simulator)
    kill_session(up)
    (orphan,) = live_clusters(simulator)
    assert orphan.cluster_name == "train"

    locked = pulumi_env.run(work, "refresh", "--yes", "--stack", "test", check=False)
    assert locked.returncode != 0
    assert "pulumi cancel" in locked.stderr
    pulumi_env.run(work, "cancel", "--yes", "--stack", "test")

    assert state_clusters(pulumi_env, work) == {}
    assert len(pending_operations(pulumi_env, work)) == 1
    pulumi_env.run(work, "refresh", "--yes", "--stack", "test")
    assert len(pending_operations(pulumi_env, work)) == 1, "engine behaviour changed: update doc"
    pulumi_env.run(work, "refresh", "--yes", "--clear-pending-creates", "--stack", "test")
    assert pending_operations(pulumi_env, work) == []

    with pytest.raises(auto.CommandError) as refused:
        stack.up()
    advice = re.search(r"adopt_cluster_id='([^']+)'", str(refused.value))
    assert advice is not None, "the duplicate error must name the fix"
    assert advice.group(1) == orphan.cluster_id
    assert successful_posts(simulator) == 1  # refused before any second POST

    set_clusters(stack, {"train": {**BASE, "adopt_cluster_id": advice.group(1)}})
    stack.up()
    (cluster,) = live_clusters(simulator)
    assert cluster.cluster_id == orphan.cluster_id
    assert state_clusters(pulumi_env, work) == {"train": orphan.cluster_id}
    assert successful_posts(simulator) == 1
    assert pending_operations(pulumi_env, work) == []
    assert stack.preview().change_summary == {auto.OpType.SAME: 2}


def test_orphaned_provider_leaves_the_cluster_for_the_user_to_adopt(
    pulumi_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    """After the CLI alone is killed, its orphaned provider must not delete the cluster behind
    the user's back: the documented recovery adopts that cluster, and a delete racing it would
    leave the state pointing at a cluster Together is tearing down."""
    _, work = cluster_stack(pulumi_env, simulator, {"train": dict(BASE)})
    up = start_cli(pulumi_env, work, *UP, "test")
    try:
        polled = "/v1/compute/clusters/{cluster_id}"
        # The first poll comes after the provider printed "created": it is past the POST.
        wait_for(
            lambda: any(r["path"] == polled for r in simulator.requests()),
            timeout=60,
            what="the create's first poll",
        )
        kill_group(up)
        # The next status change comes within provisioning/6 = 2 s (time_scale 30) plus a poll.
        deadline = 10.0
        with contextlib.suppress(AssertionError):
            wait_for(
                lambda: any(r["method"] == "DELETE" for r in simulator.requests()),
                timeout=deadline,
                what="a DELETE",
            )
        assert [r for r in simulator.requests() if r["method"] == "DELETE"] == []
        assert [c.cluster_name for c in live_clusters(simulator)] == ["train"]
    finally:
        kill_session(up)
