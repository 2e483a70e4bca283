"""How late `create` notices that a cluster is Ready, and how many GETs it spends polling.

Two measurements:
- *virtual time*: the provider's real `create` runs in this process against a simulator whose
  clock is frozen (time_scale 0); the client's sleep advances the simulator's clock instead of
  waiting, and its clock reads the simulator's. That replays the retry policy's poll schedule
  against real-length provisioning (minutes) in well under a second, exactly.
- *through the engine*: `pulumi up` of one cluster at time_scale 600, lag bounded from above by
  the simulator clock read right after `up` returns (it includes the engine's wrap-up after
  create returns, about a second of real time, i.e. ~600 simulated seconds at this scale).
Lag = (virtual time when create returned, or up ended) - the cluster's `first_ready_at`.
"""

from __future__ import annotations

import contextlib
import functools
import io
from datetime import datetime
from pathlib import Path
from typing import Any
from unittest import mock

import httpx

from bench.harness import BASE, cluster_stack, new_env, set_config, simulator
from testkit.sim import SimulatorProcess
from together_api import client as client_module
from together_api.client import TogetherClient
from together_provider.cluster.provider import ClusterProvider

ENGINE_TIME_SCALE = 600


def _sim_now(sim: SimulatorProcess) -> float:
    return float(httpx.get(f"{sim.root_url}/_sim/clock", timeout=10).json()["epoch"])


def _first_ready(sim: SimulatorProcess, cluster_id: str) -> float:
    with TogetherClient(api_key=sim.api_key, base_url=sim.base_url) as client:
        ready: datetime | None = client.get_cluster(cluster_id).first_ready_at
    assert ready is not None, "the cluster never became Ready"
    return ready.timestamp()


def _polls(sim: SimulatorProcess) -> int:
    return sum(1 for r in sim.requests() if r["path"] == "/v1/compute/clusters/{cluster_id}")


def virtual_time(root: Path, provisioning_seconds: float) -> dict[str, Any]:
    """One in-process create with the real provider and policy, on the simulator's clock."""
    extra = ("--provisioning-seconds", str(provisioning_seconds))
    with simulator(root, 0, *extra) as sim:
        client = functools.partial(
            TogetherClient, sleep=sim.advance, clock=functools.partial(_sim_now, sim)
        )
        provider = ClusterProvider()
        provider._api_key, provider._base_url = sim.api_key, sim.base_url
        props = {**BASE, "cluster_name": "lag"}
        start = _sim_now(sim)
        quiet = contextlib.redirect_stderr(io.StringIO())  # the provider's progress lines
        with mock.patch.object(client_module, "TogetherClient", client), quiet:
            result = provider.create(props)
        returned = _sim_now(sim)
        polls, calls = _polls(sim), len(sim.requests())  # before our own GET below
        ready = _first_ready(sim, result.id)
        return {
            "provisioning_s": provisioning_seconds,
            "lag_s": round(returned - ready, 1),
            "create_s": round(returned - start, 1),
            "polls": polls,
            "calls": calls,
        }


def through_engine(root: Path, repeats: int) -> list[dict[str, Any]]:
    """`pulumi up` creating one more cluster each time, at time_scale 600."""
    env = new_env(root / "readiness")
    rows = []
    with simulator(root, ENGINE_TIME_SCALE) as sim:
        declared: dict[str, Any] = {}
        stack = cluster_stack(env, sim, declared, exports=True)
        for i in range(repeats):
            declared[f"r{i}"] = dict(BASE)
            set_config(stack, "clusters", declared)
            sim.reset_requests()
            outputs = stack.up().outputs
            ended = _sim_now(sim)
            polls, calls = _polls(sim), len(sim.requests())  # before our own GET below
            lag = ended - _first_ready(sim, outputs[f"r{i}_id"].value)
            rows.append(
                {
                    "time_scale": ENGINE_TIME_SCALE,
                    "lag_upper_bound_s": round(lag, 1),
                    "lag_upper_bound_real_s": round(lag / ENGINE_TIME_SCALE, 2),
                    "polls": polls,
                    "calls": calls,
                }
            )
    return rows
