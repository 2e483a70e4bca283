"""State written before the layout of issue 18 keeps working with the code of today.

`tests/fixtures/old_state/` holds a stack created by commit 5e8fab6 (see its `generate.py`): a
dynamic Cluster with a preemptible target attached to a dynamic SharedVolume, its exported state
(every pickled provider names `together_provider.provider.ClusterProvider` or
`together_provider.volume_provider.VolumeProvider`), its config (encrypted API key) and the
simulator's state. The test imports the state into a fresh backend, starts the simulator on a
copy of its state, and runs the commands a user runs next: preview, refresh, up, destroy. The
refresh and the destroy unpickle the old provider names, so removing either compatibility module
fails here.
"""

from __future__ import annotations

import base64
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from pulumi import automation as auto

from testkit.pulumi_env import PulumiEnv
from testkit.sim import SimulatorProcess
from tests.integration.conftest import PROGRAMS
from together_api.client import TogetherClient

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "old_state"
API_KEY = "sk-test-old-state-5e8f"
"""The fixture's simulator key (a test key; the fixture holds it encrypted only)."""
STACK = "old"
CLUSTER_PUT = ("PUT", "/v1/compute/clusters/{cluster_id}")

pytestmark = pytest.mark.engine


def _old_base_url(state: dict[str, Any]) -> str:
    (provider,) = [
        r for r in state["deployment"]["resources"] if r["type"] == "pulumi:providers:pulumi-python"
    ]
    url: str = provider["inputs"]["together:baseUrl"]
    return url


@pytest.fixture
def old_stack(tmp_path: Path, pulumi_env: PulumiEnv) -> Any:
    """The fixture's stack in a fresh backend, and the simulator running on its state.

    The simulator listens on a new port, so its address (a test address, recorded in the state
    by the default provider's config) is the one thing rewritten."""
    state_text = (FIXTURE / "state.json").read_text()
    old_url = _old_base_url(json.loads(state_text))
    sim_dir = tmp_path / "simulator-state"
    sim_dir.mkdir()
    db = sqlite3.connect(sim_dir / "simulator.sqlite3")
    db.executescript((FIXTURE / "simulator.sql").read_text())
    db.close()
    with SimulatorProcess(sim_dir, time_scale=600, api_key=API_KEY) as sim:
        work = pulumi_env.project(PROGRAMS / "volumes")
        config = (FIXTURE / f"Pulumi.{STACK}.yaml").read_text()
        (work / f"Pulumi.{STACK}.yaml").write_text(config.replace("BASE_URL", sim.base_url))
        stack = pulumi_env.stack(work, STACK)
        imported = tmp_path / "state.json"
        imported.write_text(state_text.replace(old_url, sim.base_url))
        pulumi_env.run(work, "stack", "import", "--file", str(imported), "--stack", STACK)
        yield stack, sim, work


def _pickled_providers(env: PulumiEnv, work: Path) -> list[bytes]:
    state = json.loads(env.run(work, "stack", "export", "--show-secrets").stdout)
    # A secret shows as {<secret sig>: ..., "plaintext": <the value as JSON>}.
    return [
        base64.b64decode(json.loads(r["outputs"]["__provider"]["plaintext"]))
        for r in state["deployment"]["resources"]
        if "__provider" in r.get("outputs", {})
    ]


def test_a_stack_written_before_the_layout_previews_refreshes_updates_and_destroys(
    old_stack: Any, pulumi_env: PulumiEnv
) -> None:
    stack, sim, work = old_stack
    pickled = _pickled_providers(pulumi_env, work)
    assert len(pickled) == 2  # the fixture is the old code's: both providers by their old names
    assert any(b"together_provider.provider" in p and b"ClusterProvider" in p for p in pickled)
    assert any(b"together_provider.volume_provider" in p for p in pickled)

    assert stack.preview().change_summary == {"same": 3}  # the stack, the volume, the cluster
    # Refresh reads both resources through the providers the state names (the old modules).
    assert stack.refresh().summary.resource_changes == {"same": 3}

    clusters = json.loads(stack.get_config("clusters").value)
    clusters["train"]["num_preemptible_gpus"] = 16
    stack.set_config("clusters", auto.ConfigValue(json.dumps(clusters)))
    sim.reset_requests()
    assert stack.up().summary.resource_changes == {"update": 1, "same": 2}
    writes = [(r["method"], r["path"]) for r in sim.requests() if r["method"] != "GET"]
    assert writes == [CLUSTER_PUT]

    # The update stored the cluster's provider by its new name (the derived class, under the
    # registry); the unchanged volume's outputs still hold the old pickled VolumeProvider, which
    # destroy unpickles.
    pickled = _pickled_providers(pulumi_env, work)
    assert any(b"together_provider.registry" in p and b"ClusterProvider" in p for p in pickled)
    assert any(b"together_provider.volume_provider" in p for p in pickled)
    stack.destroy()
    with TogetherClient(api_key=API_KEY, base_url=sim.base_url) as client:
        assert [c.cluster_id for c in client.list_clusters() if not c.is_deleting] == []
        assert client.list_volumes() == []
