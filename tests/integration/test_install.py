"""A fresh `pip install ./worker .` (no extras) into an empty virtualenv gives the provider alone
(and the worker library it depends on, which no index serves).

What a user of the provider gets: `together_provider` imports, and neither the simulator's server
(starlette, uvicorn) nor pulumi-kubernetes is installed. Slow (a real install, ~1-2 min with a
warm pip cache), so it runs once, in `make test`.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SKIP = shutil.ignore_patterns(
    ".git", ".venv", ".build", ".demo", "build", "*.egg-info", "__pycache__", ".*_cache"
)
PROBE = """
import importlib.util, json, sys
import together_provider, together_provider.cluster.lifecycle, together_provider.stack_config
import together_provider.preview
from together_provider import Cluster, ClusterArgs
print(json.dumps({
    "installed": [n for n in ("starlette", "uvicorn", "pulumi_kubernetes")
                  if importlib.util.find_spec(n)],
    "loaded": sorted({m.split(".")[0] for m in sys.modules}),
    "cluster": Cluster.__name__,
}))
"""

pytestmark = pytest.mark.install


def test_a_plain_install_imports_the_provider_without_the_extras(tmp_path: Path) -> None:
    source = tmp_path / "src"
    shutil.copytree(ROOT, source, ignore=SKIP)
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    subprocess.run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "-c",
            str(ROOT / "constraints.txt"),
            str(source / "worker"),
            str(source),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    probe = subprocess.run(
        [str(python), "-c", PROBE], check=True, capture_output=True, text=True, cwd=tmp_path
    )
    found = json.loads(probe.stdout)
    assert found["installed"] == []
    assert found["cluster"] == "Cluster"
    extras_only = {"starlette", "uvicorn", "pulumi_kubernetes", "together_sim"}
    assert extras_only & set(found["loaded"]) == set()
    # The simulator is an extra: without it, `python -m together_sim` says so in one sentence.
    sim = subprocess.run(
        [str(python), "-m", "together_sim", "--help"], capture_output=True, text=True, cwd=tmp_path
    )
    assert sim.returncode == 1
    assert "[simulator]" in sim.stderr and "Traceback" not in sim.stderr
    # The worker library comes with no extra (standard library only): its launcher runs.
    worker = subprocess.run(
        [str(python), "-m", "together_worker", "run", "--", "sh", "-c", "exit 3"],
        capture_output=True, text=True, cwd=tmp_path,
    )  # fmt: skip
    assert worker.returncode == 3, worker.stderr
