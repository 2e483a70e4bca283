"""A wrong API key fails `up` with an error that names the key setting and the fix, never the
key itself, and changes nothing: no API call succeeds, no cluster appears, the state is as it
was."""

from __future__ import annotations

from typing import Any

from pulumi import automation as auto

from testkit.pulumi_env import PulumiEnv, Secret
from testkit.sim import SimulatorProcess
from tests.clusters import CLUSTER_TYPE, cluster_stack, fails, live_clusters, set_clusters
from tests.reliability.helpers import API_KEY, on_engine
from tests.specs import CLUSTER_SPEC as BASE

WRONG_KEY = "sk-wrong-0f9e8d7c6b"
pytestmark = on_engine(600)


SECRET_SIG = "4dabf18193072939515e22adb298388d"  # Pulumi's marker of an encrypted value


def _plain(value: Any) -> Any:
    """The value with each encrypted secret replaced by a marker: every save re-encrypts them
    with a fresh nonce, so only the plain parts of two states can be compared."""
    if isinstance(value, dict):
        if SECRET_SIG in value:
            return "<secret>"
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _cluster_resources(env: PulumiEnv) -> list[dict[str, Any]]:
    resources = env.exported_state(env.root / "projects" / "cluster")["deployment"]["resources"]
    return [
        _plain({k: r.get(k) for k in ("urn", "id", "inputs", "outputs")})
        for r in resources
        if r["type"] == CLUSTER_TYPE
    ]


def test_wrong_api_key_names_the_setting_and_changes_nothing(
    pulumi_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    stack, _ = cluster_stack(pulumi_env, simulator, {"train": {**BASE, "num_preemptible_gpus": 8}})
    stack.up()
    before_state = _cluster_resources(pulumi_env)
    before_live = [(c.cluster_id, c.desired_preemptible_gpus) for c in live_clusters(simulator)]

    stack.set_config("together:apiKey", auto.ConfigValue(Secret(WRONG_KEY).value, secret=True))
    # One in-place update (PUT) and one create (list + POST) that must both be refused.
    set_clusters(stack, {"train": {**BASE, "num_preemptible_gpus": 16}, "eval": dict(BASE)})
    simulator.reset_requests()
    error = fails(stack.up)
    assert "HTTP 401" in error
    assert "together:apiKey" in error
    assert "TOGETHER_API_KEY" in error
    assert WRONG_KEY not in error
    assert API_KEY not in error
    assert {r["status"] for r in simulator.requests()} == {401}
    assert [(c.cluster_id, c.desired_preemptible_gpus) for c in live_clusters(simulator)] == (
        before_live
    )
    assert _cluster_resources(pulumi_env) == before_state
