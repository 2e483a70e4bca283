"""docs/drill.md's commands under "Run it", run as written (bash, from the repository's root, the
`python` of this environment first on PATH): each drill comes back `safe`."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from testkit.realnodes import real_nodes_or_skip

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "drill.md"


def run_it_commands() -> list[str]:
    """The `python -m together_drill` commands of the page's "Run it" block that runs drills,
    each with its continuation lines joined as bash joins them."""
    section = PAGE.read_text().split("## Run it", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```bash\n(.*?)```", section, re.S)
    (block,) = [b for b in blocks if "python -m together_drill" in b]
    joined = block.replace("\\\n", " ")
    return [line.strip() for line in joined.splitlines() if line.startswith("python -m")]


def test_the_page_shows_two_drills_that_name_files_of_the_repository() -> None:
    commands = run_it_commands()
    assert len(commands) == 2
    assert "--manifest examples/drill/job.yaml" in commands[0]
    assert '"$(cat examples/drill/train.py)"' in commands[1]
    assert (ROOT / "examples/drill/job.yaml").is_file()


@pytest.mark.parametrize("number", [0, 1], ids=["manifest", "image-and-command"])
def test_each_drill_of_the_page_runs_as_written(
    kube_bin: Path, tmp_path: Path, number: int
) -> None:
    images = real_nodes_or_skip(kube_bin)
    # The page's commands write report.json where they run: a copy of the root's examples/
    # in a directory of the test's own keeps the repository clean.
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    python = Path(sys.executable).parent
    env = {
        **os.environ,
        "PATH": f"{python}:{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(ROOT),
        "TOGETHER_KUBE_BIN": str(kube_bin),
        "TOGETHER_IMAGES_DIR": str(images),
    }
    command = run_it_commands()[number]
    done = subprocess.run(
        ["bash", "-c", command], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=900
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "VERDICT: safe" in done.stdout
    if "--json report.json" in command:
        assert '"verdict": "safe"' in (tmp_path / "report.json").read_text()
