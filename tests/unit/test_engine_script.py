"""The tools/ builds: tools/pulumi-engine/build.sh uses an installed Pulumi (v3.272 or newer, with
the Python host beside it, as a release install has) instead of building one; every build's cache
key follows its inputs (sources, pins, build code in build.sh and tools/lib.sh) and not its
comments or the clone's path; tools/lib.sh builds once, atomically, printing only the bin
directory; and the Makefile runs every build."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from testkit.pulumi_env import TOOLS as TOOL_BINS

REPO = Path(__file__).resolve().parents[2]
TOOLS = REPO / "tools"
SCRIPT = TOOLS / "pulumi-engine" / "build.sh"
BUILDS = sorted(p.parent.name for p in TOOLS.glob("*/build.sh"))
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


# What tools/images/build.sh reads from the repository beside tools/ (its other inputs).
IMAGE_INPUTS = (
    "Dockerfile.autoscaler", "constraints.txt", "pyproject.toml", "together_facts", "together_api",
    "together_autoscaler", "worker", "scripts/worker-wheel.sh",
    "scripts/node-deps.sh",  # tools/vm/build.sh's: the packages its image installs
)  # fmt: skip


def copy_tools(destination: Path) -> Path:
    """tools/ with every build script and lib.sh, without build output or logs, and the
    repository files the images build reads beside it."""
    ignore = shutil.ignore_patterns(".*", "provider-src", "__pycache__", "*.egg-info")
    shutil.copytree(TOOLS, destination, ignore=ignore)
    for name in IMAGE_INPUTS:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, destination.parent / name, ignore=ignore)
        elif source.exists():
            (destination.parent / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination.parent / name)
    return destination


def a_pin_of(build_dir: Path) -> Path:
    """The file that pins a build's dependencies: go.sum, or go.mod for a module without any;
    for the VM image, the package list it installs (scripts/node-deps.sh)."""
    if build_dir.name == "vm":
        return build_dir.parent.parent / "scripts" / "node-deps.sh"
    return build_dir / "go.sum" if (build_dir / "go.sum").exists() else build_dir / "go.mod"


def key_of(script: Path, cache: Path) -> str:
    """The cache directory `script --where` names (no installed copy on PATH)."""
    env = {
        **os.environ,
        "PATH": "/usr/bin:/bin",
        "TOGETHER_ENGINE_CACHE": str(cache),
        "TOGETHER_K8S_PROVIDER_CACHE": str(cache),
        "TOGETHER_YAML_CACHE": str(cache),
        "TOGETHER_NODEJS_CACHE": str(cache),
        "TOGETHER_TS_CODEGEN_CACHE": str(cache),
        "TOGETHER_GO_LANGHOST_CACHE": str(cache),
        "TOGETHER_GO_CODEGEN_CACHE": str(cache),
        "TOGETHER_KUBE_CACHE": str(cache),
        "TOGETHER_ACT_CACHE": str(cache),
        "TOGETHER_ACTIONLINT_CACHE": str(cache),
        "TOGETHER_IMAGES_CACHE": str(cache),
        "TOGETHER_VM_CACHE": str(cache),
    }
    out = subprocess.run(
        ["bash", str(script), "--where"], env=env, capture_output=True, text=True, check=True
    )
    assert out.stderr == "", out.stderr
    return out.stdout.strip()


def test_every_language_host_source_keys_the_cache(tmp_path: Path) -> None:
    """`make test` rebuilds the host when any of its Go files changes (the cache key changes)."""
    script = copy_tools(tmp_path / "tools") / "pulumi-engine" / "build.sh"
    before = key_of(script, tmp_path / "c")
    for source in sorted((script.parent / "langhost").glob("*.go")):
        source.write_text(source.read_text() + "// changed\n")
        after = key_of(script, tmp_path / "c")
        assert after != before, f"a change to {source.name} does not rebuild the host"
        before = after


@pytest.mark.parametrize(
    ("common", "build"),
    [
        ("langhost-common", "pulumi-engine"),
        ("langhost-common", "nodejs-langhost"),
        ("langhost-common", "go-langhost"),
        ("codegen-common", "ts-codegen"),
        ("codegen-common", "go-codegen"),
    ],
)
def test_the_shared_code_keys_every_build_of_it(tmp_path: Path, common: str, build: str) -> None:
    """The language hosts compile tools/langhost-common and the SDK generators
    tools/codegen-common: a change to the shared module rebuilds each of them."""
    tools = copy_tools(tmp_path / "tools")
    script = tools / build / "build.sh"
    shared = tools / common
    sources = [*sorted(shared.glob("*.go")), shared / "go.mod"]
    assert len(sources) > 1, f"no shared Go sources in {shared}"
    before = key_of(script, tmp_path / "c")
    for source in sources:
        source.write_text(source.read_text() + "// changed\n")
        after = key_of(script, tmp_path / "c")
        assert after != before, f"a change to {source.name} ({common}) keeps {build}'s build"
        before = after


@pytest.mark.parametrize("build", BUILDS)
def test_the_key_follows_the_build_inputs_not_their_comments(tmp_path: Path, build: str) -> None:
    tools = copy_tools(tmp_path / "tools")
    script = tools / build / "build.sh"
    cache = tmp_path / "c"
    key = key_of(script, cache)
    assert key.startswith(f"{cache}/v") and key.endswith("/bin")
    for changed in (script, tools / "lib.sh"):
        changed.write_text(changed.read_text() + "   # a reworded comment\n\n")
        assert key_of(script, cache) == key, f"a comment in {changed.name} forces a rebuild"
    for changed, line in (
        (script, "GOFLAGS=-v"),
        (tools / "lib.sh", ": a new step"),
        (
            a_pin_of(tools / build),
            "example.com/m v1.0.0 h1:x=",
        ),
    ):
        changed.write_text(changed.read_text() + line + "\n")
        assert key_of(script, cache) != key, f"a change to {changed.name} reuses the old build"
        key = key_of(script, cache)


@pytest.mark.parametrize("build", BUILDS)
def test_every_clone_shares_one_cached_build(tmp_path: Path, build: str) -> None:
    """The key hashes contents only: another clone (another path) finds the same build."""
    one = key_of(copy_tools(tmp_path / "a" / "tools") / build / "build.sh", tmp_path / "c")
    two = key_of(copy_tools(tmp_path / "b" / "x" / "tools") / build / "build.sh", tmp_path / "c")
    assert one == two
    assert key_of(TOOLS / build / "build.sh", tmp_path / "c") == one


@pytest.mark.parametrize(
    ("build", "executable"),
    [
        ("k8s-provider", "pulumi-resource-kubernetes"),
        ("yaml-langhost", "pulumi-language-yaml"),
        ("go-langhost", "pulumi-language-go"),
        ("act", "act"),
        ("actionlint", "actionlint"),
    ],
)
def test_an_installed_plugin_or_host_is_used_unless_it_is_our_own_cache(
    tmp_path: Path, build: str, executable: str
) -> None:
    installed = tmp_path / "opt" / "bin"
    cached = tmp_path / "cache" / "v1-abc" / "bin"
    for directory in (installed, cached):
        directory.mkdir(parents=True)
        (directory / executable).write_text("#!/bin/sh\n")
        (directory / executable).chmod(0o755)
    script = TOOLS / build / "build.sh"
    env = {
        **os.environ,
        "TOGETHER_K8S_PROVIDER_CACHE": str(tmp_path / "cache"),
        "TOGETHER_YAML_CACHE": str(tmp_path / "cache"),
        "TOGETHER_GO_LANGHOST_CACHE": str(tmp_path / "cache"),
        "TOGETHER_ACT_CACHE": str(tmp_path / "cache"),
        "TOGETHER_ACTIONLINT_CACHE": str(tmp_path / "cache"),
    }
    for path, expected in ((installed, str(installed)), (cached, None)):
        env["PATH"] = f"{path}:/usr/bin:/bin"
        out = subprocess.run(
            ["bash", str(script), "--where"], env=env, capture_output=True, text=True, check=True
        )
        if expected is None:
            assert out.stdout.strip().startswith(f"{tmp_path / 'cache'}/v")
            assert out.stdout.strip() != str(cached)
        else:
            assert out.stdout.strip() == expected


FAKE_BUILD = """#!/usr/bin/env bash
set -euo pipefail
NAME="fake"
VERSION="1.0"
CACHE_ENV=FAKE_CACHE
INPUTS=(input.txt)
installed() { return 1; }
complete() { [ -x "$1/tool" ]; }
build() {
  say "building in $PWD"
  echo "$PWD" >>"$FAKE_CACHE.builds"
  [ -z "${FAKE_FAIL:-}" ] || die "the build failed on purpose"
  if [ -n "${FAKE_RACE:-}" ]; then  # another clone finishes the same build meanwhile
    mkdir -p "$(bin_dir)" && echo theirs >"$(bin_dir)/tool" && chmod +x "$(bin_dir)/tool"
  fi
  printf '#!/bin/sh\\n' >"$1/tool"
  chmod +x "$1/tool"
}
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
main "$@"
"""


def fake_build(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A build.sh on tools/lib.sh whose `build` writes one executable and logs each run."""
    tools = tmp_path / "tools"
    (tools / "fake").mkdir(parents=True)
    shutil.copy(TOOLS / "lib.sh", tools / "lib.sh")
    (tools / "fake" / "input.txt").write_text("v1\n")
    script = tools / "fake" / "build.sh"
    script.write_text(FAKE_BUILD)
    env = {**os.environ, "FAKE_CACHE": str(tmp_path / "cache" / "fake")}
    return script, env


def test_lib_builds_once_into_the_cache_and_prints_only_the_bin_dir(tmp_path: Path) -> None:
    script, env = fake_build(tmp_path)

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["bash", str(script), *args], env=env, capture_output=True, text=True)

    where = run("--where")
    first = run()
    assert first.returncode == 0, first.stderr
    assert first.stdout == where.stdout  # stdout: the bin directory, nothing else
    bin_dir = Path(first.stdout.strip())
    assert (bin_dir / "tool").exists()
    assert f"[fake] building in {script.parent}" in first.stderr  # run in the build's directory
    assert "[fake] built in" in first.stderr
    second = run()
    assert second.stdout == first.stdout and second.stderr == ""
    builds = Path(env["FAKE_CACHE"] + ".builds").read_text().splitlines()
    assert builds == [str(script.parent)], "a cached build was built again"
    assert sorted(p.name for p in bin_dir.parents[2].iterdir()) == ["fake", "fake.builds"]


def test_lib_leaves_nothing_behind_when_a_build_fails(tmp_path: Path) -> None:
    script, env = fake_build(tmp_path)
    failed = subprocess.run(
        ["bash", str(script)], env={**env, "FAKE_FAIL": "1"}, capture_output=True, text=True
    )
    assert failed.returncode != 0 and failed.stdout == ""
    assert "[fake] error: the build failed on purpose" in failed.stderr
    cache = tmp_path / "cache"
    assert sorted(p.name for p in cache.iterdir()) == ["fake", "fake.builds"]
    assert list((cache / "fake").iterdir()) == []  # no stage dir, no half-built bin


def test_lib_keeps_an_identical_build_that_finished_first(tmp_path: Path) -> None:
    """Two clones building one key at once: the later one neither replaces the finished build
    (tests may be running from it) nor nests its own inside it."""
    script, env = fake_build(tmp_path)
    done = subprocess.run(
        ["bash", str(script)], env={**env, "FAKE_RACE": "1"}, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    bin_dir = Path(done.stdout.strip())
    assert sorted(p.name for p in bin_dir.iterdir()) == ["tool"]
    assert (bin_dir / "tool").read_text() == "theirs\n"
    assert "identical build finished first" in done.stderr
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == ["fake", "fake.builds"]


def test_make_runs_every_build_and_exports_its_directory() -> None:
    """The Makefile's one list of builds covers every tools/*/build.sh, but the VM image's, which
    only ``make test-vm`` builds and boots (testkit/vm.py finds it with ``--where``)."""
    env = {**os.environ, "MAKEFLAGS": ""}
    test_vm = subprocess.run(
        ["make", "-n", "-s", "test-vm"], cwd=REPO, env=env, capture_output=True, text=True
    ).stdout
    assert "tools/vm/build.sh" in test_vm
    engine = subprocess.run(
        ["make", "-n", "-s", "engine"], cwd=REPO, env=env, capture_output=True, text=True
    ).stdout
    test = subprocess.run(
        ["make", "-n", "-s", "test"], cwd=REPO, env=env, capture_output=True, text=True
    ).stdout
    builds = [b for b in BUILDS if b != "vm"]
    for build in builds:
        assert f"tools/{build}/build.sh" in engine
        assert f"tools/{build}/build.sh" in test
    assert "tools/vm/build.sh" not in test  # minutes of mmdebstrap: make test-vm's alone
    # ... and exports each where the tests look for it (testkit's table of the builds).
    assert sorted(TOOL_BINS) == builds
    for variable, _ in TOOL_BINS.values():
        assert f"export {variable}" in test
