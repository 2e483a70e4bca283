"""`python -m together_drill` on the failures real training stacks have (issue 41): Together's
shell handler that exits 0, a torchrun-like launcher that kills the trainer mid-save, a Job whose
backoffLimit counts the reclaim, a Job that ends before its reclaim, and a two-pod gang."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from testkit.realnodes import real_nodes_or_skip

ROOT = Path(__file__).resolve().parents[2]
WORKLOADS = Path(__file__).parent / "drill"
PYTHON = "localhost/together-python:3.11"
GRACE = "6"
SAVE_SECONDS = 3  # the trainer's save after SIGTERM (tests/integration/drill/trainer.py)


def _drill(
    kube_bin: Path, tmp_path: Path, *args: str, timeout: float = 600
) -> tuple[int, dict[str, Any], str, str]:
    images = real_nodes_or_skip(kube_bin)
    report = tmp_path / "report.json"
    done = subprocess.run(
        [sys.executable, "-m", "together_drill", "--json", str(report), *args],
        capture_output=True, text=True, cwd=ROOT, timeout=timeout,
        env={**os.environ, "TOGETHER_KUBE_BIN": str(kube_bin), "TOGETHER_IMAGES_DIR": str(images)},
    )  # fmt: skip
    assert report.exists(), done.stderr
    return done.returncode, json.loads(report.read_text()), done.stdout, done.stderr


def _image(*command: str) -> list[str]:
    return ["--image", PYTHON, "--grace-seconds", GRACE, "--command", *command]


def _codes(report: dict[str, Any]) -> set[str]:
    return {p["code"] for p in report["problems"]}


@pytest.mark.parametrize(("handler_exit", "code"), [(0, 1), (143, 0)], ids=["exit-0", "exit-143"])
def test_togethers_shell_handler_exits_0_and_the_fixed_one_143(
    kube_bin: Path, tmp_path: Path, handler_exit: int, code: int
) -> None:
    """The handler as Together's page shows it (trap SIGTERM, let the trainer save, `exit 0`)
    ends the pod Succeeded: EXIT_ZERO_ON_RECLAIM. With `exit 143` (docs/drill.md) it is safe."""
    script = (WORKLOADS / "shell_trap.sh").read_text().replace("EXIT_CODE", str(handler_exit))
    trainer = (WORKLOADS / "trainer.py").read_text()
    returned, report, text, err = _drill(
        kube_bin, tmp_path, "--at", "4", *_image("sh", "-c", script, trainer)
    )
    assert returned == code, text + err
    (reclaim,) = report["reclaims"]
    (pod,) = reclaim["pods"]
    assert pod["save_after_sigterm"] == "completed"  # the trainer did save, atomically
    if handler_exit == 0:
        assert _codes(report) == {"EXIT_ZERO_ON_RECLAIM"}
        assert pod["exit_code"] == 0 and pod["counted_success"] is True
    else:
        assert report["verdict"] == "safe" and pod["exit_code"] == 143


@pytest.mark.parametrize(
    ("shutdown_timeout", "code"), [(1, 1), (5, 0)], ids=["timeout-under-save", "timeout-above"]
)
def test_a_launcher_that_kills_the_trainer_mid_save(
    kube_bin: Path, tmp_path: Path, shutdown_timeout: int, code: int
) -> None:
    """torchrun's case: SIGTERM forwarded, the trainer SIGKILLed `--shutdown-timeout` seconds
    later, the pod ending with exit 1 long before its grace. Under the save's 3 s it is
    SAVE_CUT_SHORT and never safe; above it, the same workload is safe."""
    launcher = (WORKLOADS / "launcher.py").read_text()
    trainer = (WORKLOADS / "trainer.py").read_text()
    command = (
        f"SAVE_SECONDS={SAVE_SECONDS} SHUTDOWN_TIMEOUT={shutdown_timeout} "
        'exec python3 -u -c "$0" -c "$1"'
    )
    returned, report, text, err = _drill(
        kube_bin, tmp_path, "--at", "4", *_image("sh", "-c", command, launcher, trainer)
    )
    assert returned == code, text + err
    (reclaim,) = report["reclaims"]
    (pod,) = reclaim["pods"]
    assert pod["exit_code"] == 1 and pod["forced_kill"] is False  # the launcher's own exit
    assert pod["sigterm_to_exit_seconds"] < float(GRACE)
    if shutdown_timeout < SAVE_SECONDS:
        assert _codes(report) == {"SAVE_CUT_SHORT"} and report["verdict"] == "unsafe"
        assert pod["save_after_sigterm"] == "cut_short"
        assert "state.json.tmp" in pod["save_seen_in"]
        assert "--shutdown-timeout" in report["problems"][0]["message"]
    else:
        assert report["verdict"] == "safe" and _codes(report) == set()
        assert pod["save_after_sigterm"] == "completed"


def _manifest(tmp_path: Path, spec: dict[str, Any], script: str, name: str = "train") -> Path:
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {
            **spec,
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "restartPolicy": "Never",
                    "terminationGracePeriodSeconds": int(GRACE),
                    "containers": [
                        {
                            "name": "trainer",
                            "image": PYTHON,
                            "command": ["python3", "-u", "-c", script],
                            "env": [
                                {"name": "CHECKPOINT_DIR", "value": "/checkpoints"},
                                {"name": "DRAIN_WINDOW_SECONDS", "value": GRACE},
                                {
                                    "name": "POD_NAME",
                                    "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}},
                                },
                            ],
                            "volumeMounts": [{"name": "c", "mountPath": "/checkpoints"}],
                        }
                    ],
                    "volumes": [{"name": "c", "persistentVolumeClaim": {"claimName": "ckpt"}}],
                },
            },
        },
    }
    path = tmp_path / "job.yml"
    path.write_text(yaml.safe_dump(job))
    return path


def test_a_backoff_limit_0_job_dies_at_its_first_reclaim(kube_bin: Path, tmp_path: Path) -> None:
    """No podFailurePolicy: the reclaim counts against backoffLimit 0 and fails the Job. The
    drill warns before the run and names the cause after it."""
    manifest = _manifest(tmp_path, {"backoffLimit": 0}, (WORKLOADS / "trainer.py").read_text())
    returned, report, text, err = _drill(
        kube_bin, tmp_path, "--manifest", str(manifest), "--at", "4"
    )
    assert returned == 1, text + err
    assert "warning: Job train has no podFailurePolicy rule that ignores" in err
    assert _codes(report) == {"RECLAIM_COUNTED_AS_FAILURE", "JOB_FAILED"}
    (failed,) = [p for p in report["problems"] if p["code"] == "JOB_FAILED"]
    assert "BackoffLimitExceeded" in failed["message"] and "counted against" in failed["message"]
    assert report["reclaims"][0]["pods"][0]["counted_as_failure"] is True


def test_a_job_that_ends_before_its_reclaim_ends_the_drill_at_once(
    kube_bin: Path, tmp_path: Path
) -> None:
    """A 3 s Job and a reclaim due at +300 s: exit 2 with one sentence as soon as the Job has
    ended, never a wait for the reclaim's time or --timeout (the run's bound is under both)."""
    began = time.monotonic()
    returned, report, text, err = _drill(
        kube_bin,
        tmp_path,
        "--at",
        "300",
        *_image("python3", "-c", "import time; time.sleep(3)"),
        timeout=240,
    )
    assert returned == 2, text + err
    assert "Job drill ended (Complete" in err and "before reclaim 1 of 1 was due" in err
    assert report["verdict"] == "not_drilled" and "fewer --reclaims" in report["reason"]
    assert time.monotonic() - began < 240


def test_a_two_pod_indexed_job_is_reported_per_index(kube_bin: Path, tmp_path: Path) -> None:
    """Both pods of a gang on one node (pod affinity), one reclaim: each pod is reported, each
    index resumed from its own checkpoint.

    The premise, checked first: the reclaim took both pods. It once listed only index 1 (issue
    50): on a busy machine the second pod was still starting on the node 4 s after the first ran,
    so only the first was live when the reclaim came, and the node went with the other unseen.
    A node is now no reclaim's while a pod of the Job is still starting on it."""
    spec = {
        "completionMode": "Indexed",
        "completions": 2,
        "parallelism": 2,
        "backoffLimit": 2,
        "podReplacementPolicy": "Failed",
        "podFailurePolicy": {
            "rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]
        },
    }
    manifest = _manifest(tmp_path, spec, (WORKLOADS / "good.py").read_text(), name="gang")
    job = yaml.safe_load(manifest.read_text())
    job["spec"]["template"]["spec"]["affinity"] = {
        "podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "labelSelector": {"matchLabels": {"app": "gang"}},
                    "topologyKey": "kubernetes.io/hostname",
                }
            ]
        }
    }
    manifest.write_text(yaml.safe_dump(job))
    returned, report, text, err = _drill(
        kube_bin, tmp_path, "--manifest", str(manifest), "--at", "4"
    )
    (line,) = [line for line in err.splitlines() if "reclaim 1: node" in line]
    assert "gang-0-" in line and "gang-1-" in line, f"the reclaim did not take both pods: {err}"
    assert returned == 0, text + err
    (reclaim,) = report["reclaims"]
    assert sorted(p["index"] for p in reclaim["pods"]) == ["0", "1"]
    assert all(p["resumed"] is True for p in reclaim["pods"])
    assert sorted(report["indexes"]) == ["0", "1"]
    for index, pods in report["indexes"].items():
        assert pods[0]["next_resumed_from"] == pods[0]["checkpointed_step"], index
    assert "index 0: gang-0-" in text and "index 1: gang-1-" in text
