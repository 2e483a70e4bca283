"""Neither the API key nor a kubeconfig appears in plain text in the exported state, in the most
verbose engine logs of an `up` (`--logtostderr --logflow -v=9`, provider traffic included), or
in any file the engine left in its home, backend or project directories."""

from __future__ import annotations

from pathlib import Path

from testkit.pulumi_env import PulumiEnv
from testkit.sim import SimulatorProcess
from tests.clusters import cluster_stack, live_clusters
from tests.reliability.helpers import API_KEY, on_engine
from tests.specs import CLUSTER_SPEC as BASE
from together_api.kubeconfig import decode_kube_config

pytestmark = on_engine(600)


def _secrets(wire_value: str, kube_config: str) -> list[str]:
    """The key, the kubeconfig as sent (base64) and as YAML, and each credential on its own."""
    values = [API_KEY, wire_value, kube_config]
    for line in kube_config.splitlines():
        key, _, value = line.strip().partition(": ")
        if key in ("token", "certificate-authority-data") and value:
            values.append(value)
    return values


def test_state_and_verbose_engine_logs_hold_no_plain_secret(
    pulumi_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    stack, work = cluster_stack(
        pulumi_env, simulator, {"train": {**BASE, "num_preemptible_gpus": 8}}
    )
    up = pulumi_env.run(
        work,
        "up",
        "--yes",
        "--skip-preview",
        "--stack",
        "test",
        "--logtostderr",
        "--logflow",
        "-v=9",
    )
    (cluster,) = live_clusters(simulator)
    assert cluster.kube_config
    kube_config = decode_kube_config(cluster.kube_config)
    secrets = _secrets(cluster.kube_config, kube_config)
    assert len(secrets) == 5

    logs = up.stdout + up.stderr
    assert "RegisterResource" in logs or "Configure" in logs, "verbose logging did not happen"
    state = (pulumi_env.run(work, "stack", "export", "--stack", "test")).stdout
    files = {
        path: path.read_bytes().decode(errors="replace")
        for base in (pulumi_env.home, pulumi_env.backend_dir, work)
        for path in Path(base).rglob("*")
        if path.is_file() and path.stat().st_size < 20_000_000
    }
    for secret in secrets:
        assert secret not in state
        assert secret not in logs
        leaked = [str(p) for p, text in files.items() if secret in text]
        assert leaked == [], f"a secret is in plain text in {leaked}"
    # Still readable through Pulumi, so the test would notice a wrongly empty output.
    assert stack.outputs()["train_kube_config"].value == kube_config
