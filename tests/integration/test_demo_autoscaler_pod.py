"""`make demo` with real nodes: the preemptible autoscaler is a pod on the dev cluster's real
standard node, deployed by the stack's PreemptibleAutoscaler from the locally built image, with
its ServiceAccount and RBAC; it reads its range from the stack, a `pulumi up` that moves the
floor rolls it, and it scales a burst up and back down, as its log and Events show. And the
pages test_demo.py walks with KWOK nodes, walked with real nodes."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.integration.test_demo import (  # noqa: F401 (fixtures)
    _demo_env,
    _run,
    project,
    real_nodes,
    walk_the_pages,
)

# Real nodes on again, after test_demo's environment turned them off for its pages.
pytestmark = [pytest.mark.engine, pytest.mark.usefixtures("real_nodes")]

NS = "together-autoscaler"
SELECTOR = "app.kubernetes.io/name=together-autoscaler"
ENV = "source .demo/env && "
BURST = """
apiVersion: batch/v1
kind: Job
metadata: {name: burst}
spec:
  completions: 2
  parallelism: 2
  backoffLimit: 0
  template:
    metadata:
      annotations: {together-sim/run-seconds: "60"}
    spec:
      restartPolicy: Never
      nodeSelector: {together.ai/compute-class: preemptible}
      containers:
        - name: train
          image: example.invalid/train:1
          resources: {limits: {nvidia.com/gpu: 8}}
"""


def _kubectl_json(work: Path, args: str) -> Any:
    return json.loads(_run(work, f"{ENV}kubectl {args} -o json").stdout)


def _log(work: Path) -> str:
    return _run(work, f"{ENV}kubectl -n {NS} logs -l {SELECTOR} --tail=-1").stdout


def _wait(what: str, done: Callable[[], bool], seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, f"timed out after {seconds} s waiting for {what}"
        time.sleep(1)


def test_the_demo_runs_the_autoscaler_as_a_pod_on_the_real_standard_node(
    project: Path,  # noqa: F811 (the fixture imported above)
) -> None:
    up = _run(project, "bash scripts/demo.sh up")
    assert "the preemptible autoscaler runs as a pod on the real standard node" in up.stdout
    assert not (project / ".demo" / "autoscaler.pid").exists()  # no local process

    pods = _kubectl_json(project, f"-n {NS} get pods -l {SELECTOR}")["items"]
    assert len(pods) == 1
    pod = pods[0]
    assert pod["status"]["phase"] == "Running"
    assert pod["spec"]["containers"][0]["image"].startswith("localhost/together-autoscaler:")
    assert pod["spec"]["serviceAccountName"] == "together-autoscaler"
    node = _kubectl_json(project, f"get node {pod['spec']['nodeName']}")
    assert node["metadata"]["name"].startswith("gpu-dp-")  # a standard node
    runtime = node["status"]["nodeInfo"]["containerRuntimeVersion"]
    assert runtime.startswith("containerd://"), runtime  # real, not KWOK
    assert re.search(r"\): preemptible 16-32 GPUs, scan every 2 s", _log(project))

    # A floor of 0 rolls the Deployment with the new range; the idle preemptible nodes go.
    lowered = _run(
        project,
        f"{ENV}pulumi config set --path clusters.train.numPreemptibleGpus 0 && "
        "pulumi up --yes --non-interactive --skip-preview",
    )
    assert "~ 1 updated" in lowered.stdout, lowered.stdout
    _wait("the controller of range 0-32", lambda: "preemptible 0-32 GPUs" in _log(project), 60)
    _wait("the scale-down to 0", lambda: "target 16 -> 0" in _log(project), 90)

    # The burst: the controller in the pod raises the target for the pending pods.
    _run(project, f"{ENV}kubectl apply -f - <<'EOF'\n{BURST}\nEOF")
    _wait("the scale-up", lambda: "TriggeredScaleUp" in _log(project), 60)
    assert re.search(r"TriggeredScaleUp: 2 pending pod\(s\) .*: target 0 -> 16", _log(project))
    events = _run(project, f"{ENV}kubectl get events --field-selector reason=TriggeredScaleUp")
    assert len(re.findall(r"pod/burst-\S+\s+2 pending pod\(s\)", events.stdout)) == 2
    # The pods finish (60 simulated seconds: one real second); the idle nodes go again.
    _run(project, f"{ENV}kubectl wait --for=condition=complete job/burst --timeout=120s")
    _wait("the scale-down after the burst", lambda: _log(project).count("-> 0\n") >= 2, 120)
    scaled_down = _run(project, f"{ENV}kubectl get events --field-selector reason=ScaleDown")
    assert "cordoned for targeted scale-down" in scaled_down.stdout
    assert "sim-key" not in _log(project)  # the key reached it through its Secret only

    down = _run(project, "bash scripts/demo.sh down")
    assert "simulator stopped" in down.stdout


def test_the_walkthroughs_compose_with_real_nodes(
    project: Path,  # noqa: F811 (the fixture imported above)
    tmp_path: Path,
) -> None:
    """docs/walkthrough.md, Workloads, Policy and docs/burst.md as test_demo.py runs them, with
    the demo's default real nodes: the autoscaler a pod, 13 resources in the stack."""
    walk_the_pages(project, "real", tmp_path)
