"""`python -m together_drill.ci run` on the cluster of the TOGETHER_DRILL_KUBECONFIG secret, as a
PR's drill runs on a runner that cannot run real nodes: the simulator's own control plane stands
in for the team's cluster (its one real node, labelled preemptible), and this runner is told it
cannot run real nodes, so the secret's cluster is where the drill goes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from testkit.realnodes import real_nodes_or_skip
from together_drill import world as world_module
from together_drill.ci import KUBECONFIG_ENV, choose, main
from together_drill.world import World

GOOD = (Path(__file__).parent / "drill" / "good.py").read_text()
PYTHON = "localhost/together-python:3.11"
NOT_ROOT = "real nodes need root (network namespaces, cgroups and mounts); run as root"


def test_without_real_nodes_the_pr_drill_goes_to_the_secrets_cluster(
    kube_bin: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    images = real_nodes_or_skip(kube_bin)
    world = World(kube_bin, images, 1, None)
    try:
        world.start(lambda line: None)
        world.claim("drill-checkpoints", "default")
        monkeypatch.setattr(world_module, "host_unavailable", lambda: NOT_ROOT)
        report = tmp_path / "drill.json"
        code = main(
            ["run", "--json", str(report), "--", "--volume-dir", str(world.volume_dir),
             "--at", "4", "--image", PYTHON, "--grace-seconds", "6",
             "--command", "python3", "-u", "-c", GOOD],
            environ={KUBECONFIG_ENV: world.kubeconfig},
        )  # fmt: skip
        err = capsys.readouterr().err
        assert choose(NOT_ROOT, kubeconfig_given=True).why in err
        assert code == 0, err
        result = json.loads(report.read_text())
        assert result["verdict"] == "safe", result
        (reclaim,) = result["reclaims"]
        assert [pod["exit_code"] for pod in reclaim["pods"]] == [143]
        assert "uncordoned" in err  # Together's drain done by hand: the --kubeconfig mode
    finally:
        world.close()
