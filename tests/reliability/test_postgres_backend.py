"""Teams share state: Pulumi's PostgreSQL backend (a real server, started and stopped here), with
two people running `pulumi up` at once, an `up` killed mid-create, and the database going away.

What this engine (v3.274.1) does with a DIY backend, and so with PostgreSQL, found by these tests:
- an update takes a lock object (a row in the state table) for the stack, then checks no other
  lock exists; if one does, it removes its own and fails, naming the holder and `pulumi cancel`
  (detect and back off: two `up`s of one stack started at the very same instant may both back
  off; neither proceeds, so nothing is duplicated, and a retry goes through);
- `preview` and `refresh --preview-only` take no lock, so a preview can read state that an
  update is about to change;
- different stacks have different locks and never wait for each other.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

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
    stored_outputs,
    successful_posts,
)
from tests.reliability.helpers import (
    UP,
    kill_session,
    on_engine,
    start_cli,
    up_past_create,
)
from tests.reliability.postgres import PostgresServer
from tests.specs import CLUSTER_SPEC as BASE

# 360 simulated seconds of provisioning take 12 s: time for a second command to meet the first.
pytestmark = on_engine(30)


@pytest.fixture(scope="module")
def postgres(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PostgresServer]:
    """One server for the module; each test keeps its state in a table of its own."""
    with PostgresServer(tmp_path_factory.mktemp("postgres")) as server:
        yield server


def table_for(request: pytest.FixtureRequest) -> str:
    return "state_" + re.sub(r"[^a-z0-9]+", "_", request.node.name.lower())[:50]


@pytest.fixture
def pg_env(
    tmp_path: Path, engine: Path, postgres: PostgresServer, request: pytest.FixtureRequest
) -> PulumiEnv:
    return PulumiEnv(root=tmp_path, bin_dir=engine, backend_url=postgres.url(table_for(request)))


def finish(proc: subprocess.Popen[str]) -> str:
    out, _ = proc.communicate(timeout=180)
    return out or ""


def assert_state_matches_together(env: PulumiEnv, work: Path, sim: SimulatorProcess) -> None:
    """One cluster, recorded once, with what Together reports; nothing left to do."""
    (cluster,) = live_clusters(sim)
    assert state_clusters(env, work) == {cluster.cluster_name: cluster.cluster_id}
    stored = stored_outputs(env, work)
    assert (stored["cluster_id"], stored["status"]) == (cluster.cluster_id, cluster.status)
    assert pending_operations(env, work) == []


def test_second_up_of_a_locked_stack_is_refused_and_the_first_completes(
    pg_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    stack, work, first = up_past_create(pg_env, simulator)

    # A preview takes no lock: it runs beside the update (and may read state the update changes).
    beside = pg_env.run(work, "preview", "--stack", "test", check=False)
    assert beside.returncode == 0, beside.stdout + beside.stderr
    assert first.poll() is None, "the update ended before the preview ran beside it"

    second = pg_env.run(work, *UP, "test", check=False)
    assert second.returncode != 0
    assert "the stack is currently locked by 1 lock(s)" in second.stderr
    assert "pulumi cancel" in second.stderr
    # The holder is named by its lock in the database, with the password masked.
    assert "postgres://****:****@127.0.0.1:" in second.stderr

    out = finish(first)
    assert first.returncode == 0, out
    assert successful_posts(simulator) == 1
    assert_state_matches_together(pg_env, work, simulator)
    assert stack.preview().change_summary == {auto.OpType.SAME: 2}


def test_two_stacks_up_at_once_both_succeed(pg_env: PulumiEnv, simulator: SimulatorProcess) -> None:
    _, work = cluster_stack(pg_env, simulator, {"train-a": dict(BASE)}, stack_name="alice")
    cluster_stack(pg_env, simulator, {"train-b": dict(BASE)}, stack_name="bob")
    ups = [start_cli(pg_env, work, *UP, name) for name in ("alice", "bob")]
    wait_for(lambda: successful_posts(simulator) == 2, timeout=60, what="both creates' POSTs")
    assert [p.poll() for p in ups] == [None, None], "the two updates did not overlap"

    outs = [finish(p) for p in ups]
    assert [p.returncode for p in ups] == [0, 0], outs
    live = {c.cluster_name: c.cluster_id for c in live_clusters(simulator)}
    assert set(live) == {"train-a", "train-b"}
    assert state_clusters(pg_env, work, "alice") == {"train-a": live["train-a"]}
    assert state_clusters(pg_env, work, "bob") == {"train-b": live["train-b"]}
    assert successful_posts(simulator) == 2


def recover_as_documented(
    env: PulumiEnv, work: Path, stack: auto.Stack, sim: SimulatorProcess
) -> None:
    """docs/troubleshooting.md's recovery after an interrupted create (tests/reliability/
    test_interrupted_create.py): cancel the lock, clear the pending create, adopt the cluster."""
    env.run(work, "cancel", "--yes", "--stack", "test")
    env.run(work, "refresh", "--yes", "--clear-pending-creates", "--stack", "test")
    with pytest.raises(auto.CommandError) as refused:
        stack.up()
    advice = re.search(r"adopt_cluster_id='([^']+)'", str(refused.value))
    assert advice is not None, "the duplicate error must name the fix"
    set_clusters(stack, {"train": {**BASE, "adopt_cluster_id": advice.group(1)}})
    stack.up()


def test_up_killed_mid_create_recovers_with_the_documented_steps(
    pg_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    stack, work, up = up_past_create(pg_env, simulator)
    kill_session(up)

    locked = pg_env.run(work, "up", "--yes", "--stack", "test", check=False)
    assert locked.returncode != 0
    assert "pulumi cancel" in locked.stderr
    recover_as_documented(pg_env, work, stack, simulator)

    assert successful_posts(simulator) == 1
    assert_state_matches_together(pg_env, work, simulator)
    assert stack.preview().change_summary == {auto.OpType.SAME: 2}


def test_database_stopped_during_up_fails_clearly_then_converges(
    tmp_path: Path, engine: Path, simulator: SimulatorProcess
) -> None:
    """The create finishes at Together, but its result cannot be saved: the engine says so and
    leaves what an interrupted create leaves (the lock, a pending create), and the same
    documented recovery converges on the one cluster."""
    with PostgresServer(tmp_path / "own-postgres") as server:
        env = PulumiEnv(root=tmp_path, bin_dir=engine, backend_url=server.url("state"))
        stack, work, up = up_past_create(env, simulator)
        server.stop()
        out = finish(up)
        assert up.returncode != 0
        assert re.search(r"failed to save snapshot: .*connection refused", out), out
        assert "there was a problem deleting the lock" in out
        assert "manual clean up may be required" in out

        server.start()
        retry = env.run(work, *UP, "test", check=False)
        assert retry.returncode != 0
        assert "the stack is currently locked by 1 lock(s)" in retry.stderr
        assert successful_posts(simulator) == 1

        recover_as_documented(env, work, stack, simulator)
        assert successful_posts(simulator) == 1
        assert_state_matches_together(env, work, simulator)
        assert stack.preview().change_summary == {auto.OpType.SAME: 2}
