"""The images real nodes run, built with no registry (tools/images/build.sh): each archive carries
the name and entrypoint a real node's pods use, and each root filesystem really runs: python3 on
PATH with the worker library's wheel installed, the autoscaler's controller as its non-root
user, a pause that exits 0 on SIGTERM. Skipped, with the reason, where real nodes cannot run."""

from __future__ import annotations

import os
import signal
import subprocess
import tomllib
from pathlib import Path

import pytest

from testkit.images import (
    archive_files,
    archive_tags,
    image_config,
    image_names,
    images_dir_or_skip,
    run_in_rootfs,
    unpack,
)
from testkit.pulumi_env import REPO

VERSION = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
WORKER = tomllib.loads((REPO / "worker" / "pyproject.toml").read_text())["project"]
EXPECTED = {
    "pause.tar": ("localhost/together-pause:1", ["/pause"]),
    "python.tar": ("localhost/together-python:3.11", ["/usr/bin/python3"]),
    "autoscaler.tar": (
        f"localhost/together-autoscaler:{VERSION}",
        ["python", "-m", "together_autoscaler"],
    ),
}
SITE_PACKAGES = "/usr/local/lib/python3.11/dist-packages"


@pytest.fixture(scope="module")
def images() -> Path:
    return images_dir_or_skip()


@pytest.fixture(scope="module")
def unpacked(images: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each image's root filesystem, unpacked once for the module."""
    work = tmp_path_factory.mktemp("images")
    return {archive: unpack(images / archive, work / archive) for archive in EXPECTED}


def test_each_archive_carries_its_name_and_entrypoint(images: Path) -> None:
    assert image_names(images) == {archive: name for archive, (name, _) in EXPECTED.items()}
    for archive, (name, entrypoint) in EXPECTED.items():
        assert archive_tags(images / archive) == [name], archive
        assert image_config(images / archive)["Entrypoint"] == entrypoint, archive


def test_the_autoscaler_runs_as_a_non_root_user(images: Path) -> None:
    assert image_config(images / "autoscaler.tar")["User"] == "65532:65532"


def test_the_python_image_has_python3_on_path_and_its_stdlib(unpacked: dict[str, Path]) -> None:
    rootfs = unpacked["python.tar"]
    ran = run_in_rootfs(
        rootfs,
        "python3",
        "-c",
        "import sys, ssl, json, sqlite3, ctypes, zlib; print(sys.version_info[:2], sys.executable)",
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "(3, 11) /usr/bin/python3"


def test_the_python_image_leaves_out_tests_tk_idle_ensurepip_and_bytecode(images: Path) -> None:
    files = archive_files(images / "python.tar")
    stdlib = "usr/lib/python3.11/"
    assert stdlib + "json/__init__.py" in files
    for left_out in ("test/", "idlelib/", "tkinter/", "ensurepip/", "EXTERNALLY-MANAGED"):
        assert not any(f.startswith(stdlib + left_out) for f in files), left_out
    assert not [f for f in files if "__pycache__" in f or f.endswith(".pyc")]


def test_the_python_image_installs_the_worker_librarys_wheel(unpacked: dict[str, Path]) -> None:
    """The wheel, as `pip install` of it leaves it (the package and its dist-info), and nothing
    else of this project: the image's launcher runs."""
    rootfs = unpacked["python.tar"]
    probe = (
        "import importlib.metadata as m, together_worker; "
        "print(together_worker.__file__); "
        "print(sorted(d.metadata['Name'] for d in m.distributions()))"
    )
    ran = run_in_rootfs(rootfs, "python3", "-c", probe)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.splitlines() == [
        f"{SITE_PACKAGES}/together_worker/__init__.py",
        f"[{WORKER['name']!r}]",
    ]
    launched = run_in_rootfs(
        rootfs, "python3", "-m", "together_worker", "run", "--", "sh", "-c", "exit 3"
    )
    assert launched.returncode == 3, launched.stderr


def test_the_autoscaler_image_runs_its_controller(unpacked: dict[str, Path]) -> None:
    """Its dependencies (compiled ones too: pydantic_core, msgspec) import in the image, as the
    user the Deployment runs it as, from the working directory the Dockerfile sets."""
    rootfs = unpacked["autoscaler.tar"]
    ran = run_in_rootfs(
        rootfs, "python", "-m", "together_autoscaler", "--help", user="65532:65532", cwd="/app"
    )
    assert ran.returncode == 0, ran.stderr
    assert "--max-preemptible-gpus" in ran.stdout
    imports = "import msgspec, pydantic_core, lightkube, httpx, prometheus_client, yaml"
    ran = run_in_rootfs(rootfs, "python", "-c", imports, user="65532:65532", cwd="/app")
    assert ran.returncode == 0, ran.stderr


def test_the_pause_exits_0_on_sigterm(unpacked: dict[str, Path]) -> None:
    rootfs = unpacked["pause.tar"]
    pause = subprocess.Popen(["chroot", str(rootfs), "/pause"])
    try:
        # Running (not failed at exec) before the signal: it is still there a moment later.
        with pytest.raises(subprocess.TimeoutExpired):
            pause.wait(timeout=0.5)
        os.kill(pause.pid, signal.SIGTERM)
        assert pause.wait(timeout=10) == 0
    finally:
        if pause.poll() is None:
            pause.kill()
            pause.wait()
