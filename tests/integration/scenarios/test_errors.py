"""An API error reaches the user as our sentence and its fix, never as a Python traceback: for a
wrong key (401), no answer, a 404, a 409 and a 5xx after every retry, in refresh (read), update,
create, delete and, on the native host, import; on both hosts (`host` fixture: dynamic, native).

One stack per host walks through every error (each step is a behaviour; one stack keeps the
suite fast): a volume and the cluster that attaches it, made once, then each failure in turn,
each with the engine's whole output checked. Check and diff make no API call, so none of these
errors can reach them; their own failures (a refused spec) are held traceback-free by
test_cluster.py and test_volume.py.
"""

from __future__ import annotations

import re
import socket

import pytest
from pulumi import automation as auto

from testkit.pulumi_env import PulumiEnv, Secret
from testkit.sim import SimulatorProcess
from tests.clusters import fails, set_clusters, together_client
from tests.hosts import Host
from tests.native import CLUSTER_TOKEN
from tests.specs import CKPT, CLUSTER_SPEC, TRAIN

API_KEY = "sk-test-errors-3b8e1f"
WRONG_KEY = "sk-wrong-key-7d0c5a"
FAST = {"time_scale": 600, "api_key": API_KEY}
pytestmark = [pytest.mark.engine, pytest.mark.parametrize("simulator", [FAST], indirect=True)]

KEY_FIX = "(fix: check the API key; set together:apiKey as a secret or TOGETHER_API_KEY)"


def plain(output: str, *expected: str) -> str:
    """`output` holds each `expected` sentence and nothing of Python's: no traceback, no source
    location, no exception class name in front of our message."""
    assert "Traceback" not in output, output
    assert 'File "' not in output and not re.search(r"\.py\b", output), output
    assert "together_facts.errors." not in output, output
    for text in expected:
        assert text in output, f"{text!r} not in:\n{output}"
    return output


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def _config(stack: auto.Stack, key: str, value: str, *, secret: bool = False) -> None:
    stack.set_config(key, auto.ConfigValue(value, secret=secret))


def test_every_api_error_is_one_sentence_with_its_fix(
    host: Host, env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    stack = host.volume_stack(env, simulator, {"ckpt": CKPT}, {"train": TRAIN})
    outputs = stack.up().outputs
    cluster_id = outputs["train_id"].value
    base = simulator.base_url
    train = f"{base}/compute/clusters/{cluster_id}"
    grown = {"train": {**TRAIN, "num_preemptible_gpus": 8}}

    # A wrong key: one up that updates `train` and creates `eval`, then refresh (which reads
    # with the provider config that up stored), destroy and, on the native host, import.
    _config(stack, "together:apiKey", Secret(WRONG_KEY).value, secret=True)
    refused = "failed with HTTP 401: missing or invalid API key"
    set_clusters(stack, {**grown, "eval": dict(CLUSTER_SPEC)})
    up = plain(
        fails(stack.up),
        f"PUT {train} {refused} {KEY_FIX}",  # the update
        f"GET {base}/compute/clusters {refused} {KEY_FIX}",  # the create's duplicate guard
    )
    assert WRONG_KEY not in up
    plain(fails(stack.refresh), f"GET {train} {refused} {KEY_FIX}")
    plain(fails(stack.destroy), f"DELETE {train} {refused} {KEY_FIX}")
    if host.name == "native":
        imported = env.run(
            host.volume_work(env), "import", CLUSTER_TOKEN, "again", cluster_id,
            "--yes", "--generate-code=false", "--stack", "test", check=False,
        )  # fmt: skip
        assert imported.returncode != 0
        plain(imported.stdout + imported.stderr, f"GET {train} {refused} {KEY_FIX}")
    _config(stack, "together:apiKey", Secret(API_KEY).value, secret=True)
    set_clusters(stack, grown)

    # Nothing answers at the base URL: update and refresh, after the client's retries.
    nowhere = f"http://127.0.0.1:{_closed_port()}/v1"
    _config(stack, "together:baseUrl", nowhere)
    fix = "(fix: check the network and the base URL, together:baseUrl or TOGETHER_BASE_URL;"
    gone = f"{nowhere}/compute/clusters/{cluster_id}: no answer: ConnectError"
    plain(fails(stack.up), f"PUT {gone}", fix)
    plain(fails(stack.refresh), f"GET {gone}", fix)
    _config(stack, "together:baseUrl", base)

    # Every answer a 503 (Retry-After 0: the retries do not wait): update and refresh.
    simulator.set_faults(error_rate=1.0, error_statuses=[503], retry_after=0)
    busy = "failed with HTTP 503: "
    plain(fails(stack.up), f"PUT {train} {busy}", "(fix: retry later)")
    plain(fails(stack.refresh), f"GET {train} {busy}", "(fix: retry later)")
    simulator.clear_faults()

    # A 409: no standard capacity left for a create.
    simulator.set_capacity("us-central-8", "H100_SXM", standard_gpus=8)
    set_clusters(stack, {**grown, "eval": dict(CLUSTER_SPEC)})
    plain(
        fails(stack.up),
        f"POST {base}/compute/clusters failed with HTTP 409: Out of stock "
        "(fix: try another region or GPU type, fewer GPUs, or retry later)",
    )
    simulator.set_capacity("us-central-8", "H100_SXM", standard_gpus=64)

    # A 404: the cluster was deleted outside the stack, and the update's PUT finds nothing. (The
    # refresh its fix names drops it: test_cluster.py's drift test.)
    with together_client(simulator) as client:
        client.delete_cluster(cluster_id)
    simulator.advance(600)
    set_clusters(stack, {"train": {**TRAIN, "num_preemptible_gpus": 16}})
    plain(
        fails(stack.up),
        f"PUT {train} failed with HTTP 404",
        "`pulumi refresh` removes it from the state",
    )
