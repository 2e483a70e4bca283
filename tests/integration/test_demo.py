"""The demo, docs/walkthrough.md and the Kubernetes walkthrough of docs/workloads.md,
run exactly as written, in a copy of the project."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from testkit.kube import control_plane_processes
from testkit.pulumi_env import REPO
from tests.kube_helpers import demo_bins_env

pytestmark = pytest.mark.engine
TG = "CI=1 tg "
"""`tg` as the walkthrough runs it; CI=1 only stops it installing shell completion in ~/.bashrc."""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture
def project(tmp_path: Path, engine: Path) -> Iterator[Path]:
    """The demo's files in a temp dir, sharing the repo's virtualenv; torn down after."""
    work = tmp_path / "project"
    work.mkdir()
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(REPO / name, work / name)
    for name in ("stacks", "scripts"):
        shutil.copytree(REPO / name, work / name)
    shutil.copytree(
        REPO / "examples" / "sweep",
        work / "examples" / "sweep",
        ignore=shutil.ignore_patterns("__pycache__", "Pulumi.*.yaml"),
    )
    (work / ".venv").symlink_to(Path(sys.prefix))
    yield work
    _run(work, "bash scripts/demo.sh down", check=False)


def _run(work: Path, command: str, *, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    result = subprocess.run(
        ["bash", "-c", command], cwd=work, env=env, capture_output=True, text=True, timeout=300
    )
    if check and result.returncode != 0:
        raise AssertionError(f"{command!r} failed:\n{result.stdout}\n{result.stderr}")
    return result


@pytest.fixture(autouse=True)
def _demo_env(monkeypatch: pytest.MonkeyPatch, engine: Path) -> None:
    monkeypatch.setenv("TOGETHER_ENGINE_BIN", str(engine))
    monkeypatch.setenv("DEMO_SIM_PORT", str(_free_port()))
    for name, value in demo_bins_env().items():
        monkeypatch.setenv(name, value)


def test_demo_comes_up_then_changes_nothing_the_second_time(project: Path) -> None:
    first = _run(project, "bash scripts/demo.sh up")
    assert "+ 3 created" in first.stdout  # the stack, the checkpoint volume, the cluster
    assert '"status":"Ready"' in first.stdout
    second = _run(project, "bash scripts/demo.sh up")
    assert "3 unchanged" in second.stdout


def test_demo_down_then_demo_again_comes_up_each_time(project: Path) -> None:
    """`make demo-down && make demo`, back to back: down returns once the simulator and its
    control planes are gone, having freed what the demo made, so the next up never finds a
    stopping simulator answering on the port."""
    demo = project / ".demo"
    _run(project, "bash scripts/demo.sh up")
    # What is left is read in the same shell the moment `down` returns: its stop takes well
    # under a second, so a `down` that does not wait would be seen here.
    after = (
        'pid=$(cat .demo/simulator.pid) && bash scripts/demo.sh down && echo "left:'
        ' $(cut -d" " -f3 /proc/$pid/stat 2>/dev/null || echo gone)'
        ' $(ls .demo/simulator/kube | wc -l)"'
    )
    for attempt in range(3):
        down = _run(project, after)
        assert "simulator stopped" in down.stdout, down.stdout
        simulator, directories = down.stdout.rsplit("left: ", 1)[1].split()
        assert simulator in ("gone", "Z") and directories == "0", f"down {attempt}: {down.stdout}"
        assert control_plane_processes(demo / "simulator") == []
        assert not (demo / "simulator.pid").exists() and not (demo / "kubeconfig").exists()
        up = _run(project, "bash scripts/demo.sh up")
        assert "already running" not in up.stdout, up.stdout
        assert "+ 3 created" in up.stdout, f"up {attempt}:\n{up.stdout}\n{up.stderr}"


def test_readme_walkthrough(project: Path) -> None:
    _run(project, "bash scripts/demo.sh up")
    env = "source .demo/env && "

    _run(project, env + "pulumi config set --path clusters.train.numPreemptibleGpus 24")
    preview = _run(project, env + "pulumi preview --diff")
    assert re.search(r"~ num_preemptible_gpus\s*: 16 => 24", preview.stdout)
    assert "1 to update" in preview.stdout

    up = _run(project, env + "pulumi up --yes")
    assert "1 updated" in up.stdout

    # Step 1b: grow the checkpoint volume in place, then see a shrink refused at preview.
    _run(project, env + "pulumi config set --path volumes.checkpoints.sizeTib 4")
    grown = _run(project, env + "pulumi up --yes")
    assert "1 updated" in grown.stdout and "2 unchanged" in grown.stdout
    _run(project, env + "pulumi config set --path volumes.checkpoints.sizeTib 2")
    shrink = _run(project, env + "pulumi preview", check=False)
    assert shrink.returncode != 0
    assert "volume 'checkpoints': size_tib 4 -> 2 would shrink the volume" in shrink.stdout
    _run(project, env + "pulumi config set --path volumes.checkpoints.sizeTib 4")

    # Steps 2 and 3, with the walkthrough's own command lines.
    find_id = (
        "ID=$(pulumi stack output train --json | python3 -c "
        "'import json,sys; print(json.load(sys.stdin)[\"cluster_id\"])') && "
    )
    counts = _run(
        project,
        env
        + find_id
        + 'curl -s -H "Authorization: Bearer $TOGETHER_API_KEY" '
        + '"$TOGETHER_BASE_URL/v1/compute/clusters/$ID" | python3 -c '
        + "'import json,sys; c=json.load(sys.stdin); "
        + 'print(c["desired_preemptible_gpus"], c["allocated_preemptible_gpus"])\'',
    )
    desired, allocated = (int(n) for n in counts.stdout.split())
    assert desired == 24
    assert 0 <= allocated <= desired and allocated % 8 == 0
    # Together's own CLI in the same shell: TOGETHER_BASE_URL is host-only, as `tg` expects.
    retrieved = _run(
        project,
        env
        + find_id
        + TG
        + 'clusters retrieve "$ID" --json | python3 -c '
        + "'import json,sys; c=json.load(sys.stdin); "
        + 'print(c["status"], c["desired_preemptible_gpus"])\'',
    )
    assert retrieved.stdout.split() == ["Ready", "24"]
    # The demo wrote .demo/kubeconfig 0600 (it holds the admin key); tg writes only into a file
    # of that mode: on any other it prints a note, writes nothing and still exits 0
    # (together/lib/cli/api/clusters/get_credentials.py, together 3.1.1).
    assert stat.S_IMODE((project / ".demo" / "kubeconfig").stat().st_mode) == 0o600
    creds = 'clusters get-credentials "$ID" --file .demo/kubeconfig'
    written = _run(project, env + find_id + TG + creds)
    assert "Kubeconfig written to" in written.stdout, written.stdout
    kubeconfig = yaml.safe_load((project / ".demo" / "kubeconfig").read_text())
    assert kubeconfig["kind"] == "Config" and kubeconfig["clusters"]
    names = _run(
        project,
        env + "python3 -c 'import together; "
        "print([c.cluster_name for c in together.Together().clusters.list().clusters])'",
    )
    assert "train" in names.stdout  # the Python SDK in the same shell: same host-only URL
    capacity = _run(
        project,
        env + 'curl -s -X PUT "$SIM/_sim/capacity" '
        '-d \'{"region":"us-central-8","gpu_type":"H100_SXM","preemptible_gpus":16}\'',
    )
    assert '"preemptible_gpus":16' in capacity.stdout.replace(" ", "")
    reclaim = _run(
        project,
        env + find_id + 'curl -s -X POST "$SIM/_sim/clusters/$ID/reclaim" -d \'{"nodes": 1}\'',
    )
    assert "gpu-preemptible" in reclaim.stdout
    refresh = _run(project, env + "pulumi refresh --yes")
    assert "3 unchanged" in refresh.stdout
    (reclaimed,) = json.loads(reclaim.stdout)["reclaimed"]
    nodes = _run(project, env + "kubectl get nodes -L together.ai/compute-class")
    assert "COMPUTE-CLASS" in nodes.stdout and "preemptible" in nodes.stdout
    events = _run(
        project,
        env + "kubectl get events -A --field-selector reason=TogetherPreemptionNotified",
    )
    assert reclaimed in events.stdout and "Warning" in events.stdout

    _run(project, env + "pulumi config set --path clusters.train.numGpus 16")
    _run(project, env + "pulumi config set --path clusters.train.numPreemptibleGpus 16")
    conversion = _run(project, env + "pulumi preview", check=False)
    assert conversion.returncode != 0
    assert "refuses it as a safety policy" in conversion.stdout

    _run(project, env + "pulumi config set --path clusters.train.numGpus 0")
    zero = _run(project, env + "pulumi preview", check=False)
    assert zero.returncode != 0
    assert "clusters.train.numGpus: num_gpus=0 leaves no standard node" in zero.stdout

    down = _run(project, "bash scripts/demo.sh down")
    assert "simulator stopped" in down.stdout


def _kubernetes_walkthrough() -> str:
    """The bash block of docs/workloads.md's walkthrough, as written."""
    doc = (REPO / "docs" / "workloads.md").read_text()
    after = doc.split("<!-- walkthrough:kubernetes -->", 1)[1]
    return after.split("```bash\n", 1)[1].split("```", 1)[0]


def test_kubernetes_walkthrough(project: Path) -> None:
    up = _run(project, "bash scripts/demo.sh up")
    # `make demo` shows the dev cluster in Kubernetes: its nodes, labelled by compute class.
    assert re.search(r"gpu-dp-\S+\s+Ready", up.stdout), up.stdout

    walk = _run(project, "set -euo pipefail\n" + _kubernetes_walkthrough())
    out = walk.stdout
    # `kubectl get nodes -L together.ai/compute-class` of the dev cluster (KUBECONFIG from env).
    assert re.search(r"gpu-preemptible-dp-\S+\s+Ready\s.*\spreemptible", out), out
    node, index = re.search(r"reclaiming (\S+), which runs index (\d+)", out).groups()  # type: ignore[union-attr]
    # The cordon, and the Warning event that says why.
    assert re.search(rf"{node}\s+Ready,SchedulingDisabled", out), out
    assert re.search(rf"Warning\s+TogetherPreemptionNotified\s+node/{node}", out), out
    # The index runs again, on another node; the reclaim counted no failure.
    again = re.search(rf"index {index} runs again on (\S+)", out)
    assert again is not None and again.group(1) not in ("", node), out
    assert "failed: \n" in out, out
