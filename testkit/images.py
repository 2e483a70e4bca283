"""The images real nodes run (tools/images/build.sh), for tests: where they are, which name each
archive carries, and an archive unpacked into a root filesystem to run a command in."""

from __future__ import annotations

import json
import os
import subprocess
import tarfile
from pathlib import Path

import pytest

from testkit.pulumi_env import REPO, TOOLS, tool_bin

__all__ = [
    "archive_files",
    "archive_tags",
    "image_config",
    "image_names",
    "images_dir_or_skip",
    "run_in_rootfs",
    "unpack",
]

NODE_DEPS = REPO / "scripts" / "node-deps.sh"
UNAVAILABLE = 3
"""node-deps.sh's exit status where real nodes cannot run."""

# No registry and nothing signed: every image is built locally.
_POLICY = '{"default": [{"type": "insecureAcceptAnything"}]}\n'


def images_dir_or_skip() -> Path:
    """The directory of the image archives, built when needed. Under ``make test``
    ($TOGETHER_IMAGES_DIR set) it must exist; where real nodes cannot run (REAL_NODES=0, not
    root, Debian packages missing) the test is skipped with node-deps.sh's one-line reason."""
    variable = TOOLS["images"][0]
    if os.environ.get(variable):
        return tool_bin("images")
    if os.environ.get("REAL_NODES") == "0":
        pytest.skip("REAL_NODES=0: real nodes are off (make test printed why)")
    check = subprocess.run(["bash", str(NODE_DEPS), "--check"], capture_output=True, text=True)
    if check.returncode == UNAVAILABLE:
        pytest.skip(check.stderr.strip())
    check.check_returncode()
    built = subprocess.run(
        ["bash", str(REPO / "tools" / "images" / "build.sh")],
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stderr
    return Path(built.stdout.strip())


def image_names(images: Path) -> dict[str, str]:
    """images.txt: each archive's file name and the image name it carries."""
    lines = (images / "images.txt").read_text().splitlines()
    return dict(line.split(" ", 1) for line in lines if line.strip())


def archive_tags(archive: Path) -> list[str]:
    """The names a docker-archive gives its image (manifest.json's RepoTags): what
    `ctr images import` names the image."""
    with tarfile.open(archive) as tar:
        member = tar.extractfile("manifest.json")
        assert member is not None, f"{archive} has no manifest.json"
        manifest = json.load(member)
    return [tag for entry in manifest for tag in entry.get("RepoTags") or []]


def archive_files(archive: Path) -> set[str]:
    """The paths of every file in every layer of a docker-archive, as the build wrote them."""
    files: set[str] = set()
    with tarfile.open(archive) as tar:
        member = tar.extractfile("manifest.json")
        assert member is not None, f"{archive} has no manifest.json"
        for entry in json.load(member):
            for layer_name in entry["Layers"]:
                layer = tar.extractfile(layer_name)
                assert layer is not None, f"{archive} has no layer {layer_name}"
                with tarfile.open(fileobj=layer) as files_tar:
                    files.update(name.removeprefix("./") for name in files_tar.getnames())
    return files


def image_config(archive: Path) -> dict[str, object]:
    """The image's runtime config (Entrypoint, Cmd, Env, User), as skopeo reads it."""
    out = subprocess.run(
        ["skopeo", "inspect", "--config", f"docker-archive:{archive}"],
        capture_output=True,
        text=True,
        check=True,
    )
    config: dict[str, object] = json.loads(out.stdout)["config"]
    return config


def unpack(archive: Path, work: Path) -> Path:
    """The image's root filesystem, its layers applied in order (whiteouts too) by skopeo and
    umoci, under ``work``."""
    work.mkdir(parents=True, exist_ok=True)
    policy = work / "policy.json"
    policy.write_text(_POLICY)
    layout = f"oci:{work / 'oci'}:image"
    subprocess.run(
        ["skopeo", "--policy", str(policy), "copy", "--quiet", f"docker-archive:{archive}", layout],
        check=True,
    )
    subprocess.run(
        ["umoci", "unpack", "--image", layout.removeprefix("oci:"), str(work / "bundle")],
        check=True,
        capture_output=True,
    )
    return work / "bundle" / "rootfs"


def run_in_rootfs(
    rootfs: Path, *command: str, user: str = "0:0", cwd: str = "/"
) -> subprocess.CompletedProcess[str]:
    """``command`` as PID 1 of a new PID and mount namespace, chrooted into ``rootfs``, with the
    image's PATH: the image's own files and nothing of the host's."""
    return subprocess.run(
        ["unshare", "--mount", "--pid", "--fork", "chroot", f"--userspec={user}", str(rootfs),
         "/bin/env", "-i", "PATH=/usr/local/bin:/usr/bin:/bin", "/bin/sh", "-c",
         'cd "$1" && shift && exec "$@"', "sh", cwd, *command],
        capture_output=True,
        text=True,
        timeout=60,
    )  # fmt: skip
