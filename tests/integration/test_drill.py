"""`python -m together_drill` on real nodes, run as a user runs it: five workloads it has not
seen get the verdict they deserve, the shell-wrapped one is safe under the launcher, the sweep's
trial resumes after each reclaim with at most one checkpoint interval redone, bad input exits 2."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from testkit.realnodes import real_nodes_or_skip

ROOT = Path(__file__).resolve().parents[2]
WORKLOADS = Path(__file__).parent / "drill"
PYTHON = "localhost/together-python:3.11"
GRACE = "6"  # seconds: a workload that ignores SIGTERM costs this much per reclaim


def _python(script: Path) -> list[str]:
    return ["python3", "-u", "-c", script.read_text()]


def _wrapped(script: Path) -> list[str]:
    """The script behind a shell as PID 1: two commands, no exec (what the policy pack flags)."""
    code = base64.b64encode(script.read_text().encode()).decode()
    inner = f"python3 -u -c \"import base64; exec(base64.b64decode('{code}'))\""
    return ["sh", "-c", f"{inner}; echo trained"]


def _drill(
    kube_bin: Path, tmp_path: Path, command: list[str], *extra: str
) -> tuple[int, dict[str, Any], str]:
    images = real_nodes_or_skip(kube_bin)
    report = tmp_path / "report.json"
    done = subprocess.run(
        [sys.executable, "-m", "together_drill", "--image", PYTHON, "--grace-seconds", GRACE,
         "--json", str(report), *extra, "--command", *command],
        capture_output=True, text=True, cwd=ROOT, timeout=900,
        env={**os.environ, "TOGETHER_KUBE_BIN": str(kube_bin), "TOGETHER_IMAGES_DIR": str(images)},
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    assert done.stdout.strip().endswith(("VERDICT: safe", "VERDICT: unsafe")), done.stdout
    return done.returncode, json.loads(report.read_text()), done.stdout


def _codes(report: dict[str, Any]) -> set[str]:
    return {p["code"] for p in report["problems"]}


@pytest.mark.parametrize(
    ("workload", "command", "exit_code", "codes"),
    [
        ("good", _python(WORKLOADS / "good.py"), 0, set()),
        ("ignores-sigterm", _python(WORKLOADS / "ignores_sigterm.py"), 1, {"SIGTERM_IGNORED"}),
        ("exits-0", _python(WORKLOADS / "exits_zero.py"), 1, {"EXIT_ZERO_ON_RECLAIM"}),
        ("shell-wrapper", _wrapped(WORKLOADS / "good.py"), 1, {"SIGTERM_IGNORED"}),
        ("in-place", _python(WORKLOADS / "in_place.py"), 1, {"PARTIAL_CHECKPOINT"}),
        (
            "shell-wrapper-under-the-launcher",
            ["python3", "-m", "together_worker", "run", "--", *_wrapped(WORKLOADS / "good.py")],
            0,
            set(),
        ),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_the_drill_judges_each_workload(
    kube_bin: Path,
    tmp_path: Path,
    workload: str,
    command: list[str],
    exit_code: int,
    codes: set[str],
) -> None:
    code, report, text = _drill(kube_bin, tmp_path, command, "--seed", "1")
    assert (code, _codes(report)) == (exit_code, codes), text
    assert report["verdict"] == ("safe" if exit_code == 0 else "unsafe")
    (reclaim,) = report["reclaims"]
    (pod,) = reclaim["pods"]
    assert pod["sigterm_delivered"] is True
    if "SIGTERM_IGNORED" in codes or "PARTIAL_CHECKPOINT" in codes:
        assert pod["forced_kill"] is True and pod["exit_code"] == 137
        assert pod["sigterm_to_exit_seconds"] >= float(GRACE)  # not before the grace ended
    if workload.startswith(("good", "shell-wrapper-under")):
        assert pod["exit_code"] == 143 and pod["forced_kill"] is False
        assert pod["sigterm_to_exit_seconds"] < float(GRACE)
        assert pod["checkpoint_written"] is True and pod["resumed"] is True
        assert report["completed"] is True
    if workload == "exits-0":
        assert pod["exit_code"] == 0 and pod["counted_success"] is True
        assert report["completed"] is True  # the Job thinks so: that is the problem


def test_the_sweep_trial_resumes_after_each_reclaim_redoing_at_most_one_interval(
    kube_bin: Path, tmp_path: Path
) -> None:
    """examples/sweep's trial (sweep/trial.py) in CheckpointingWorker's Job, reclaimed twice."""
    trial = (ROOT / "examples" / "sweep" / "sweep" / "trial.py").read_text()
    every = 4
    command = ["python3", "-m", "together_worker", "run", "--", "sh", "-c",
               f"TRIAL_STEPS=40 TRIAL_STEP_SECONDS=0.5 TRIAL_CHECKPOINT_EVERY={every} "
               f"exec python3 -u -c \"$0\"", trial]  # fmt: skip
    code, report, text = _drill(kube_bin, tmp_path, command, "--reclaims", "2", "--seed", "5")
    assert code == 0 and report["verdict"] == "safe", text
    pods = [pod for reclaim in report["reclaims"] for pod in reclaim["pods"]]
    assert len(pods) == 2
    for pod in pods:
        assert pod["resumed"] is True and pod["checkpoint_every"] == every
        assert pod["work_redone"] <= every  # per reclaim: at most one checkpoint interval
    assert report["completed"] is True


def test_bad_input_exits_2_and_starts_nothing(kube_bin: Path, tmp_path: Path) -> None:
    images = real_nodes_or_skip(kube_bin)
    # A temporary directory of its own: another test's drill (another worker) makes and removes
    # its world under /tmp meanwhile, and only this drill's world is the question.
    own_tmp = tmp_path / "tmp"
    own_tmp.mkdir()
    env = {
        **os.environ,
        "TOGETHER_KUBE_BIN": str(kube_bin),
        "TOGETHER_IMAGES_DIR": str(images),
        "TMPDIR": str(own_tmp),
    }
    not_an_image = tmp_path / "image.tar"
    not_an_image.write_text("not an archive")
    for module, argv, message in [
        ("together_drill", ["--image", "example.com/nope:1", "--command", "true"],
         "not on the drill's nodes"),
        ("together_sim.drill",  # the old name, a thin alias
         ["--image", PYTHON, "--image-archive", str(not_an_image), "--command", "true"],
         "--image-archive"),
    ]:  # fmt: skip
        done = subprocess.run(
            [sys.executable, "-m", module, *argv],
            capture_output=True, text=True, cwd=ROOT, env=env, timeout=60,
        )  # fmt: skip
        assert done.returncode == 2 and message in done.stderr, done.stderr
        assert list(own_tmp.glob("together-drill-*")) == []  # no world was made
