"""The demo's pages start from the committed dev stack config and leave it so: each restores the
config it changes, and `make demo` / `make demo-down` say when the file differs from git's."""

from __future__ import annotations

import copy
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from testkit.promises import bash_block

REPO = Path(__file__).parents[2]
STACK_FILE = "stacks/Pulumi.dev.yaml"
PROJECT = "together-gpu-clusters"


def _committed() -> dict[str, Any]:
    config = yaml.safe_load((REPO / STACK_FILE).read_text())["config"]
    return {key.removeprefix(f"{PROJECT}:"): value for key, value in config.items()}


def _bash_block(page: str, marker: str) -> str:
    return bash_block(REPO / "docs" / page, marker)[0]


def _next_steps() -> str:
    """The steps `make demo` prints when it is done (scripts/demo.sh's NEXT here-document)."""
    return (
        (REPO / "scripts" / "demo.sh").read_text().split("<<'NEXT'\n", 1)[1].split("\nNEXT", 1)[0]
    )


def _run_config_commands(script: str, config: dict[str, Any]) -> dict[str, Any]:
    """The stack config after `script`'s `pulumi config set --path K V` and `git checkout` of the
    stack file, in order (everything else left out)."""
    config = copy.deepcopy(config)
    for line in script.splitlines():
        for command in line.split("&&"):
            if not command.strip().startswith(("pulumi config set", "git checkout")):
                continue
            words = shlex.split(command, comments=True)
            if words[:4] == ["pulumi", "config", "set", "--path"]:
                *parents, leaf = words[4].split(".")
                node = config
                for key in parents:
                    node = node.setdefault(key, {})
                node[leaf] = yaml.safe_load(words[5])
            elif words[:2] == ["git", "checkout"] and STACK_FILE in words:
                config = _committed()
    return config


def test_the_printed_next_steps_leave_the_committed_config() -> None:
    steps = _next_steps()
    assert "numPreemptibleGpus 24" in steps  # they do change it
    assert _run_config_commands(steps, _committed()) == _committed()


def test_the_burst_page_restores_the_config_it_changes() -> None:
    block = _bash_block("burst.md", "burst")
    assert "numPreemptibleGpus 0" in block
    assert _run_config_commands(block, _committed()) == _committed()


def test_the_policy_page_restores_the_config_it_changes() -> None:
    block = _bash_block("policy.md", "policy")
    assert "maxPreemptibleGpus 48" in block
    assert _run_config_commands(block, _committed()) == _committed()


def test_the_walkthrough_keeps_only_the_grown_volume_and_its_last_block_restores_all() -> None:
    after = _run_config_commands(_bash_block("walkthrough.md", "demo"), _committed())
    grown = copy.deepcopy(_committed())
    grown["volumes"]["checkpoints"]["sizeTib"] = 4  # a volume cannot shrink: the page says so
    assert after == grown
    assert _run_config_commands(_bash_block("walkthrough.md", "done"), after) == _committed()


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A git checkout holding the stack file and the script."""
    (tmp_path / "scripts").mkdir()
    (tmp_path / "stacks").mkdir()
    shutil.copy(REPO / "scripts" / "stack-config-status.sh", tmp_path / "scripts")
    shutil.copy(REPO / STACK_FILE, tmp_path / "stacks")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run([*git, "add", "-A"], cwd=tmp_path, check=True)
    subprocess.run([*git, "commit", "-qm", "c"], cwd=tmp_path, check=True)
    return tmp_path


def _status(root: Path) -> str:
    done = subprocess.run(
        ["bash", str(root / "scripts" / "stack-config-status.sh"), "dev"],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def test_demo_up_and_down_say_when_the_stack_config_differs(checkout: Path) -> None:
    assert _status(checkout) == ""
    stack = checkout / STACK_FILE
    stack.write_text(stack.read_text().replace("numPreemptibleGpus: 16", "numPreemptibleGpus: 24"))
    said = _status(checkout)
    assert f"note: {STACK_FILE} differs from the committed file" in said
    assert f"git checkout {STACK_FILE} restores it" in said
    subprocess.run(["git", "checkout", "-q", STACK_FILE], cwd=checkout, check=True)
    assert _status(checkout) == ""
    demo = (REPO / "scripts" / "demo.sh").read_text()
    assert demo.count('bash "$REPO/scripts/stack-config-status.sh" "$STACK"') == 2  # up, down


def test_outside_a_git_checkout_it_says_nothing(checkout: Path) -> None:
    shutil.rmtree(checkout / ".git")
    assert _status(checkout) == ""
