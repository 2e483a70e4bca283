"""The drill through `--kubeconfig` alone (no `--volume-dir`), on the simulator's own control plane
with real nodes: its reader pod reads the checkpoint claim of the cluster's shared volume from a
node it does not reclaim, so a good workload (with the worker library or without) is `safe`, one
that ignores SIGTERM `unsafe`, one that saves to /tmp `unverified`; the reader pod is gone at the
end. And what cannot start or fails by itself ends the drill in seconds, naming why."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from testkit.kube import kube_bin_or_skip
from testkit.realnodes import real_nodes_or_skip
from testkit.wait import wait_for
from together_drill.reader import READER_LABEL
from together_drill.world import World

ROOT = Path(__file__).resolve().parents[2]
WORKLOADS = Path(__file__).parent / "drill"
PYTHON = "localhost/together-python:3.11"
GRACE = "6"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[World, Path]]:
    kube_bin = kube_bin_or_skip()
    images = real_nodes_or_skip(kube_bin)
    world = World(kube_bin, images, 1, None)  # one preemptible node, and the standard one
    try:
        world.start(lambda line: None)
        world.claim("drill-checkpoints", "default")  # the cluster's shared volume, claimed
        config = tmp_path_factory.mktemp("reader") / "kubeconfig"
        config.write_text(world.kubeconfig)
        yield world, config
    finally:
        world.close()


def _fresh(world: World) -> None:
    for left in world.volume_dir.iterdir():
        shutil.rmtree(left) if left.is_dir() else left.unlink()


def _drill(
    world: World, config: Path, tmp_path: Path, *args: str
) -> tuple[int, dict[str, Any], str, float]:
    _fresh(world)
    report = tmp_path / "report.json"
    began = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "together_drill", "--kubeconfig", str(config),
         "--json", str(report), *args],
        capture_output=True, text=True, cwd=ROOT, timeout=600,
    )  # fmt: skip
    took = time.monotonic() - began
    assert report.exists(), done.stdout + done.stderr

    def left() -> list[str]:
        """What the drill left (an API server slow on a busy machine is asked again)."""
        readers = world.kube.items(f"/api/v1/namespaces/default/pods?labelSelector={READER_LABEL}")
        nodes = world.kube.items("/api/v1/nodes")
        return [f"pod {p['metadata']['name']}" for p in readers] + [
            f"node {n['metadata']['name']} cordoned"
            for n in nodes
            if n["spec"].get("unschedulable")
        ]

    assert wait_for(lambda: [left()], "the cluster", timeout=60, ignore=(httpx.HTTPError,)) == [
        []
    ], "the drill left the cluster otherwise than it found it"
    return done.returncode, json.loads(report.read_text()), done.stdout + done.stderr, took


def _image(*command: str) -> list[str]:
    return ["--at", "4", "--image", PYTHON, "--grace-seconds", GRACE, "--command", *command]


def _trainer(*env: str) -> list[str]:
    """tests/integration/drill/trainer.py (no worker library: an atomic save on SIGTERM, exit
    143) as PID 1, with ``env`` set."""
    trainer = (WORKLOADS / "trainer.py").read_text()
    return ["sh", "-c", f'{" ".join(env)} exec python3 -u -c "$0"', trainer]


def test_a_good_workload_is_safe_through_the_kubeconfig_alone(
    world: tuple[World, Path], tmp_path: Path
) -> None:
    code, report, output, _ = _drill(
        *world, tmp_path, *_image("python3", "-u", "-c", (WORKLOADS / "good.py").read_text())
    )
    assert code == 0, output
    assert report["verdict"] == "safe"
    (pod,) = report["reclaims"][0]["pods"]
    assert pod["save_after_sigterm"] == "completed" and pod["resumed"] is True
    assert "volume reader pod drill-volume-reader on node" in output
    assert "cleaning up: volume reader pod drill-volume-reader deleted" in output


def test_a_workload_without_the_library_is_safe_from_the_volumes_files(
    world: tuple[World, Path], tmp_path: Path
) -> None:
    code, report, output, _ = _drill(*world, tmp_path, *_image(*_trainer("SAVE_SECONDS=1")))
    assert code == 0, output
    (pod,) = report["reclaims"][0]["pods"]
    assert pod["save_after_sigterm"] == "completed" and pod["exit_code"] == 143
    assert "the volume:" in str(pod["save_seen_in"])


def test_a_workload_that_ignores_sigterm_is_unsafe(
    world: tuple[World, Path], tmp_path: Path
) -> None:
    script = (WORKLOADS / "ignores_sigterm.py").read_text()
    code, report, output, _ = _drill(*world, tmp_path, *_image("python3", "-c", script))
    assert code == 1, output
    assert "SIGTERM_IGNORED" in {p["code"] for p in report["problems"]}


def test_a_workload_that_saves_to_tmp_is_unverified(
    world: tuple[World, Path], tmp_path: Path
) -> None:
    code, report, output, _ = _drill(*world, tmp_path, *_image(*_trainer("CHECKPOINT_DIR=/tmp")))
    assert code == 3, output
    assert report["verdict"] == "unverified"


def _example(tmp_path: Path, *, configmap: bool = True) -> Path:
    """examples/drill/job.yaml on this cluster: its claim is the one of the cluster's shared
    volume the fixture made (a static volume binds one claim)."""
    documents = list(yaml.safe_load_all((ROOT / "examples/drill/job.yaml").read_text()))
    kept = [
        d
        for d in documents
        if d["kind"] != "PersistentVolumeClaim" and (configmap or d["kind"] != "ConfigMap")
    ]
    for document in kept:
        for volume in (
            document.get("spec", {}).get("template", {}).get("spec", {}).get("volumes", [])
        ):
            if "persistentVolumeClaim" in volume:
                volume["persistentVolumeClaim"]["claimName"] = "drill-checkpoints"
    manifest = tmp_path / "job.yaml"
    manifest.write_text(yaml.safe_dump_all(kept))
    return manifest


def test_a_job_whose_configmap_is_missing_is_named_in_seconds(
    world: tuple[World, Path], tmp_path: Path
) -> None:
    """examples/drill/job.yaml without its ConfigMap: the pod's FailedMount names it (exit 2
    within 90 s, where it once waited out its timeout in silence)."""
    manifest = _example(tmp_path, configmap=False)
    code, report, output, took = _drill(*world, tmp_path, "--manifest", str(manifest))
    assert code == 2, output
    assert took < 90, output
    assert "FailedMount" in report["reason"] and 'configmap "train-script" not found' in output
    assert "put it in the manifest" in report["reason"]


def test_the_job_with_its_script_in_a_configmap_is_safe(
    world: tuple[World, Path], tmp_path: Path
) -> None:
    manifest = _example(tmp_path)
    code, report, output, _ = _drill(*world, tmp_path, "--manifest", str(manifest), "--at", "6")
    assert code == 0, output
    assert report["verdict"] == "safe"
    assert "ConfigMap train-script of the manifest created" in output
    left = world[0].kube.http.get("/api/v1/namespaces/default/configmaps/train-script")
    assert left.status_code == 404  # it created the ConfigMap, so it deleted it


def test_a_command_that_fails_by_itself_is_said_with_its_log_lines(
    world: tuple[World, Path], tmp_path: Path
) -> None:
    """docs/drill.md's old example: no train.py in the image, so the command exits 2 at once."""
    code, report, output, took = _drill(
        *world, tmp_path, *_image("python3", "-m", "together_worker", "run", "--", "python3",
                                  "train.py")
    )  # fmt: skip
    assert code == 2, output
    assert took < 60, output
    assert "failed by itself" in report["reason"]
    assert "train.py" in report["reason"] and "No such file" in report["reason"]
    assert "None" not in report["reason"]
