"""docs/autoscaling.md's Deploying snippet runs as written: as a program of its own, its preview
registers the cluster, its Kubernetes provider and the autoscaler's objects, with no error."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
import yaml
from pulumi import automation as auto

from testkit.pulumi_env import REPO, PulumiEnv, Secret, provider_config
from testkit.sim import SimulatorProcess

pytestmark = pytest.mark.engine
API_KEY = "sk-autoscaling-snippet"


def _snippet() -> str:
    doc = (REPO / "docs" / "autoscaling.md").read_text()
    section = doc.split("\n## Deploying it\n", 1)[1].split("\n## ", 1)[0]
    (code,) = re.findall(r"```python\n(.*?)```", section, re.S)
    return str(code)


@pytest.mark.parametrize("simulator", [{"time_scale": 600, "api_key": API_KEY}], indirect=True)
def test_the_deploying_snippet_previews_as_written(
    tmp_path: Path, k8s_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    work = tmp_path / "burst"
    work.mkdir()
    runtime = {"name": "python", "options": {"toolchain": "pip", "virtualenv": sys.prefix}}
    (work / "Pulumi.yaml").write_text(yaml.safe_dump({"name": "burst", "runtime": runtime}))
    (work / "__main__.py").write_text(_snippet())
    stack = k8s_env.stack(
        work, "dev", config={**provider_config(simulator), "togetherApiKey": Secret("sk-key")}
    )
    preview = stack.preview()
    assert set(preview.change_summary) == {auto.OpType.CREATE}, preview.stdout
    for created in ("together:Cluster", "pulumi:providers:kubernetes", "apps/v1:Deployment",
                    "rbac.authorization.k8s.io/v1:ClusterRole", "v1:Secret"):  # fmt: skip
        assert re.search(rf"\+ .*{re.escape(created)}\b", preview.stdout), preview.stdout
    assert "error" not in preview.stderr.lower(), preview.stderr
