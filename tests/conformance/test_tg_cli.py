"""Together's own CLI (`tg`, together 3.1.1) runs the preemptible launch flow against the
simulator, spelled exactly as 3.1.1 spells it: `tg clusters ...` with the global `--project`.

Each command is a subprocess with the host-only TOGETHER_BASE_URL (the CLI's paths carry /v1),
telemetry and the version check off, and a private HOME, so nothing leaves loopback or touches
the machine (CI=1 also stops it installing shell completion). stdin is not a terminal, so the
CLI runs non-interactively, as in a script.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from together.types import cluster as sdk_cluster

from testkit.sim import SimulatorProcess

TG = Path(sys.executable).with_name("tg")
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


class Tg:
    def __init__(self, sim: SimulatorProcess, home: Path) -> None:
        home.mkdir(parents=True, exist_ok=True)
        self.env = {
            "PATH": str(TG.parent) + ":/usr/bin:/bin",
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "TOGETHER_API_KEY": sim.api_key,
            "TOGETHER_BASE_URL": sim.root_url,
            "TOGETHER_TELEMETRY_DISABLED": "1",
            "TOGETHER_DISABLE_VERSION_CHECK": "1",
            "CI": "1",
            "COLUMNS": "200",
            "NO_COLOR": "1",
        }

    def __call__(self, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            [str(TG), *args],
            env=self.env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
        )
        if ok:
            assert result.returncode == 0, f"tg {' '.join(args)}:\n{result.stdout}{result.stderr}"
        return result


@pytest.fixture
def tg(sim: SimulatorProcess, tmp_path: Path) -> Tg:
    return Tg(sim, tmp_path / "home")


def test_the_launch_flow_as_tg_spells_it(sim: SimulatorProcess, tg: Tg, tmp_path: Path) -> None:
    sim.reset_requests()
    created = tg(
        "--project", "proj-launch",
        "clusters", "create",
        "--name", "my-cluster",
        "--region", "us-central-8",
        "--gpu-type", "H100_SXM",
        "--cluster-type", "KUBERNETES",
        "--num-gpus", "8",
        "--billing-type", "ON_DEMAND",
        "--num-preemptible-gpus", "8",
        "--nvidia-driver-version", "570",
        "--cuda-version", "12.8",
    )  # fmt: skip
    assert "Cluster created successfully" in created.stdout
    [cluster_id] = UUID.findall(created.stdout)
    assert ("GET", "/v3/whoami") not in {(r["method"], r["path"]) for r in sim.requests()}

    sim.advance(360 + 60)
    updated = tg("clusters", "update", cluster_id, "--num-preemptible-gpus", "16")
    assert "Cluster updated successfully" in updated.stdout
    # No --project: the CLI asks /v3/whoami for the key's project first, and gets an answer.
    assert {"method": "GET", "path": "/v3/whoami", "status": 200} in sim.requests()

    retrieved = sdk_cluster.Cluster.model_validate(
        json.loads(tg("clusters", "retrieve", cluster_id, "--json").stdout)
    )
    assert (retrieved.status, retrieved.project_id) == ("Ready", "proj-launch")
    assert (retrieved.desired_preemptible_gpus, retrieved.allocated_preemptible_gpus) == (16, 8)

    kubeconfig_file = tmp_path / "kube" / "config"
    written = tg("clusters", "get-credentials", cluster_id, "--file", str(kubeconfig_file))
    assert "Kubeconfig written to" in written.stdout, written.stdout
    kubeconfig = yaml.safe_load(kubeconfig_file.read_text())
    assert kubeconfig["kind"] == "Config" and kubeconfig["apiVersion"] == "v1"
    assert kubeconfig["contexts"][0]["name"] == "my-cluster"
    assert kubeconfig["users"][0]["user"]["token"]

    volume = tg(
        "clusters", "storage", "create",
        "--region", "us-central-8", "--size-tib", "2", "--volume-name", "data",
    )  # fmt: skip
    assert "Storage volume created successfully" in volume.stdout
    [volume_id] = re.findall(r"vol-[0-9a-f]+", volume.stdout)
    listing = tg("clusters", "storage", "list").stdout
    assert volume_id in listing and "2 TiB" in listing
    assert "my-cluster" in tg("clusters", "list").stdout

    deleted = tg("clusters", "delete", cluster_id)
    assert f"Deleted cluster ({cluster_id})" in deleted.stdout
    again = json.loads(tg("clusters", "retrieve", cluster_id, "--json").stdout)
    assert again["status"] == "Deleting"


def test_the_old_spellings_are_refused_by_3_1_1(tg: Tg) -> None:
    """Why our hints say `tg clusters` and `--project`: the announcement's forms do not work."""
    beta = tg("beta", "clusters", "list", ok=False)
    assert beta.returncode != 0 and 'Unknown command "clusters"' in beta.stdout + beta.stderr
    old_flag = tg("--project-id", "p", "clusters", "list", ok=False)
    assert 'Unknown command "--project-id"' in old_flag.stdout + old_flag.stderr


def test_get_credentials_writes_and_rewrites_only_an_owner_only_file(
    sim: SimulatorProcess, tg: Tg, tmp_path: Path
) -> None:
    """Why the demo writes .demo/kubeconfig 0600: `tg clusters get-credentials --file` creates a
    missing file 0600 and writes into an existing one only when its mode ends in 600 (together
    3.1.1, together/lib/cli/api/clusters/get_credentials.py); otherwise it prints a note, writes
    nothing and exits 0, and a script goes on with the old file."""
    created = tg(
        "--project", "proj-creds", "clusters", "create", "--name", "creds",
        "--region", "us-central-8", "--gpu-type", "H100_SXM", "--cluster-type", "KUBERNETES",
        "--num-gpus", "8", "--billing-type", "ON_DEMAND",
        "--nvidia-driver-version", "570", "--cuda-version", "12.8",
    )  # fmt: skip
    [cluster_id] = UUID.findall(created.stdout)
    fresh = tmp_path / "new" / "kubeconfig"
    assert (
        "Kubeconfig written to"
        in tg("clusters", "get-credentials", cluster_id, "--file", str(fresh)).stdout
    )
    assert fresh.stat().st_mode & 0o777 == 0o600
    again = tg("clusters", "get-credentials", cluster_id, "--file", str(fresh))
    assert "Kubeconfig written to" in again.stdout  # the same cluster again: rewritten
    assert yaml.safe_load(fresh.read_text())["contexts"][0]["name"] == "creds"

    loose = tmp_path / "loose"
    loose.write_text("")
    loose.chmod(0o644)
    refused = tg("clusters", "get-credentials", cluster_id, "--file", str(loose))
    assert 'has permissions "644"' in refused.stdout and loose.read_text() == ""
