"""tools/pulumi-engine/build.sh uses an installed Pulumi (v3.272 or newer, with the Python host
beside it, as a release install has) instead of building one, and rebuilds our language host
whenever any of its sources changes."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "tools" / "pulumi-engine" / "build.sh"
HOST_FILES = (
    "pulumi-language-python",
    "pulumi-language-python-exec",
    "pulumi-resource-pulumi-python",
)


def fake_release(directory: Path, version: str, *, with_host: bool = True) -> Path:
    """A directory that looks like a release install: `pulumi` printing `version`, and the host."""
    directory.mkdir(parents=True)
    cli = directory / "pulumi"
    cli.write_text(f"#!/bin/sh\necho {version}\n")
    cli.chmod(0o755)
    for name in HOST_FILES if with_host else ():
        (directory / name).write_text("#!/bin/sh\n")
        (directory / name).chmod(0o755)
    return directory


def where(tmp_path: Path, bin_dir: Path) -> str:
    env = {
        **os.environ,
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "TOGETHER_ENGINE_CACHE": str(tmp_path / "cache"),
    }
    out = subprocess.run(
        ["bash", str(SCRIPT), "--where"], env=env, capture_output=True, text=True, check=True
    )
    return out.stdout.strip()


@pytest.mark.parametrize("version", ["v3.272.0", "v3.274.1", "v3.301.0", "v3.280.0-dev.0"])
def test_an_installed_pulumi_from_3_272_on_is_used_as_it_is(tmp_path: Path, version: str) -> None:
    release = fake_release(tmp_path / "pulumi" / "bin", version)
    assert where(tmp_path, release) == str(release)


@pytest.mark.parametrize("version", ["v3.271.9", "v2.300.0", "v4.0.0", "garbage"])
def test_an_unsupported_pulumi_is_not_used(tmp_path: Path, version: str) -> None:
    release = fake_release(tmp_path / "pulumi" / "bin", version)
    assert where(tmp_path, release).startswith(str(tmp_path / "cache"))


def test_a_cli_without_the_python_host_beside_it_is_not_used(tmp_path: Path) -> None:
    release = fake_release(tmp_path / "pulumi" / "bin", "v3.274.1", with_host=False)
    assert where(tmp_path, release).startswith(str(tmp_path / "cache"))


def test_every_language_host_source_keys_the_cache(tmp_path: Path) -> None:
    """`make test` rebuilds the host when any of its Go files changes (the cache key changes)."""
    copy = tmp_path / "pulumi-engine"
    shutil.copytree(SCRIPT.parent, copy, ignore=shutil.ignore_patterns(".*"))
    env = {**os.environ, "PATH": "/usr/bin:/bin", "TOGETHER_ENGINE_CACHE": str(tmp_path / "c")}

    def key() -> str:
        out = subprocess.run(
            ["bash", str(copy / "build.sh"), "--where"], env=env, capture_output=True, text=True
        )
        return out.stdout.strip()

    before = key()
    for source in sorted((copy / "langhost").glob("*.go")):
        source.write_text(source.read_text() + "// changed\n")
        after = key()
        assert after != before, f"a change to {source.name} does not rebuild the host"
        before = after
