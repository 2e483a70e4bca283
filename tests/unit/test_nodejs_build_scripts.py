"""tools/nodejs-langhost/build.sh and tools/ts-codegen/build.sh rebuild whenever any of their
sources changes (the cache key is a hash of them), and a `pulumi-language-nodejs` already on
PATH (a release install) is used as it is."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _where(script: Path, cache: Path, path: str = "/usr/bin:/bin") -> str:
    env = {
        **os.environ,
        "PATH": path,
        "TOGETHER_NODEJS_CACHE": str(cache),
        "TOGETHER_TS_CODEGEN_CACHE": str(cache),
    }
    out = subprocess.run(
        ["bash", str(script), "--where"], env=env, capture_output=True, text=True, check=True
    )
    return out.stdout.strip()


@pytest.mark.parametrize("tool", ["nodejs-langhost", "ts-codegen"])
def test_every_source_keys_the_cache(tmp_path: Path, tool: str) -> None:
    tools = tmp_path / "tools"
    shutil.copytree(REPO / "tools", tools, ignore=shutil.ignore_patterns(".*", "provider-src"))
    copy = tools / tool
    sources = [*sorted(copy.glob("*.go")), copy / "go.mod", copy / "go.sum"]
    before = _where(copy / "build.sh", tmp_path / "cache")
    assert before.startswith(str(tmp_path / "cache"))
    for source in sources:
        source.write_text(source.read_text() + "// changed\n")
        after = _where(copy / "build.sh", tmp_path / "cache")
        assert after != before, f"a change to {source.name} does not rebuild {tool}"
        before = after


def test_a_nodejs_host_on_path_is_used_as_it_is(tmp_path: Path) -> None:
    release = tmp_path / "pulumi" / "bin"
    release.mkdir(parents=True)
    (release / "pulumi-language-nodejs").write_text("#!/bin/sh\n")
    (release / "pulumi-language-nodejs").chmod(0o755)
    script = REPO / "tools" / "nodejs-langhost" / "build.sh"
    assert _where(script, tmp_path / "cache", f"{release}:/usr/bin:/bin") == str(release)
