"""scripts/node-deps.sh installs the Debian packages real nodes need only when one is missing
(apt-get update once, then one install), and where it cannot (not root, no apt-get, a failed
install) says so in one line with exit 3, so make demo and make test go on with KWOK nodes."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "node-deps.sh"
UNAVAILABLE = 3


def decide(uid: int, has_apt: bool, *missing: str) -> str:
    out = subprocess.run(
        ["bash", str(SCRIPT), "--decide", str(uid), "yes" if has_apt else "no", *missing],
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.strip()


def test_root_with_everything_present_is_ready() -> None:
    assert decide(0, True) == "ready"
    assert decide(0, False) == "ready"  # nothing to install: apt-get is not needed


def test_root_with_apt_installs_exactly_the_missing_packages() -> None:
    assert decide(0, True, "containerd", "umoci") == "install containerd umoci"


def test_without_root_real_nodes_are_unavailable_even_with_every_package() -> None:
    assert decide(1000, True).startswith("unavailable not root")
    verdict = decide(1000, True, "skopeo")
    assert verdict.startswith("unavailable not root") and "skopeo" in verdict


def test_root_without_apt_and_something_missing_is_unavailable() -> None:
    verdict = decide(0, False, "runc")
    assert verdict.startswith("unavailable no apt-get") and "runc" in verdict


def fake_host(
    tmp_path: Path, *, uid: int = 0, installed: bool = False, apt_fails: bool = False
) -> dict[str, str]:
    """A PATH whose `id`, `dpkg-query` and `apt-get` are fakes: dpkg-query reports every package
    missing until the fake apt-get has "installed" them (a marker file); apt-get logs its calls."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    marker = tmp_path / "installed"
    if installed:
        marker.touch()
    calls = tmp_path / "apt-calls"
    scripts = {
        "id": f"#!/bin/sh\necho {uid}\n",
        "dpkg-query": f'#!/bin/sh\n[ -e "{marker}" ] && printf "install ok installed" || exit 1\n',
        "apt-get": (
            f'#!/bin/sh\necho "$*" >>"{calls}"\n'
            + ("exit 100\n" if apt_fails else f'case "$*" in *install*) touch "{marker}";; esac\n')
        ),
    }
    for name, text in scripts.items():
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}:/usr/bin:/bin", "TMPDIR": str(tmp_path)}


def run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(SCRIPT), *args], env=env, capture_output=True, text=True)


def apt_calls(tmp_path: Path) -> list[str]:
    calls = tmp_path / "apt-calls"
    return calls.read_text().splitlines() if calls.exists() else []


def test_everything_present_is_quiet_and_runs_no_apt(tmp_path: Path) -> None:
    done = run(fake_host(tmp_path, installed=True))
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert apt_calls(tmp_path) == []


def test_missing_packages_are_installed_after_one_update(tmp_path: Path) -> None:
    done = run(fake_host(tmp_path))
    assert done.returncode == 0, done.stderr
    update, install = apt_calls(tmp_path)
    assert update == "update -qq"
    assert install.startswith("install -y -qq --no-install-recommends containerd runc ")
    assert "containernetworking-plugins" in install and "busybox-static" in install
    assert done.stderr.count("\n") == 1  # one progress line, apt's output only in its log


@pytest.mark.parametrize("mode", ["install", "--check"])
def test_not_root_says_so_in_one_line_with_exit_3(tmp_path: Path, mode: str) -> None:
    done = run(fake_host(tmp_path, uid=1000), *([] if mode == "install" else [mode]))
    assert done.returncode == UNAVAILABLE
    assert done.stderr.startswith("real nodes are unavailable: not root")
    assert done.stderr.count("\n") == 1
    assert apt_calls(tmp_path) == []


def test_check_installs_nothing(tmp_path: Path) -> None:
    done = run(fake_host(tmp_path), "--check")
    assert done.returncode == UNAVAILABLE
    assert "missing Debian packages: containerd" in done.stderr
    assert apt_calls(tmp_path) == []


def test_a_failed_install_is_one_line_naming_its_log(tmp_path: Path) -> None:
    done = run(fake_host(tmp_path, apt_fails=True))
    assert done.returncode == UNAVAILABLE
    assert done.stderr.splitlines()[-1].startswith("real nodes are unavailable: apt-get install")
    assert str(tmp_path / "together-node-deps.log") in done.stderr


@pytest.mark.parametrize("target", ["engine", "demo", "test", "images"])
def test_make_installs_the_packages_before_it_builds(target: str) -> None:
    """make engine, demo, test and images run node-deps.sh, and the image build only after it."""
    env = {**os.environ, "MAKEFLAGS": ""}
    dry = subprocess.run(
        ["make", "-n", "-s", target], cwd=REPO, env=env, capture_output=True, text=True
    ).stdout
    assert "scripts/node-deps.sh" in dry
    assert dry.index("scripts/node-deps.sh") < dry.index("tools/images/build.sh")
