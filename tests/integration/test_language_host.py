"""The Python language host the engine runs (ours, or upstream's in a release install) behaves as
upstream's does: `-version`, `About`, `GetProgramDependencies`, and the runtime options of
Pulumi.yaml validated, not ignored. Three tests check what only our host does (Cancel ends it; it
exits soon after the engine goes away, its health interval being settable): they are marked
`langhost_extras` and skip on upstream's host (testkit/langhost.py).

Each test drives the host binary over its gRPC contract, with a stand-in engine: a gRPC server
with no services, which the host's health check treats as alive (Unimplemented) until it stops.
"""

from __future__ import annotations

import platform
import re
import subprocess
import sys
from collections.abc import Iterator
from concurrent import futures
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import empty_pb2, struct_pb2  # type: ignore[import-untyped]
from pulumi.runtime.proto import language_pb2, language_pb2_grpc

from testkit.langhost import host_extras, our_build_dir
from testkit.pulumi_env import PulumiEnv
from testkit.sim import SimulatorProcess
from testkit.wait import wait_for
from tests.clusters import cluster_stack, successful_posts
from tests.integration.conftest import PROGRAMS
from tests.reliability.helpers import (
    API_KEY,
    kill_group,
    kill_session,
    session_pids,
    start_cli,
)
from tests.specs import CLUSTER_SPEC as BASE

pytestmark = pytest.mark.engine

VENV = str(Path(sys.prefix))
# How often our host probes the engine in these tests (upstream's: every 5 minutes, fixed).
HEALTH_INTERVAL = "200ms"


class EngineProbes(grpc.GenericRpcHandler):  # type: ignore[misc]
    """Counts the host's health probes of the fake engine; each is still answered Unimplemented
    (no handler), which the host's health check treats as alive."""

    def __init__(self) -> None:
        self.count = 0

    def service(self, handler_call_details: grpc.HandlerCallDetails) -> None:
        if handler_call_details.method == "/grpc.health.v1.Health/Check":
            self.count += 1


@dataclass
class Host:
    process: subprocess.Popen[str]
    stub: language_pb2_grpc.LanguageRuntimeStub
    engine: grpc.Server
    probes: EngineProbes

    def exited(self) -> bool:
        return self.process.poll() is not None


@pytest.fixture
def host(engine: Path) -> Iterator[Host]:
    probes = EngineProbes()
    fake_engine = grpc.server(futures.ThreadPoolExecutor(max_workers=2), handlers=[probes])
    port = fake_engine.add_insecure_port("127.0.0.1:0")
    fake_engine.start()
    process = subprocess.Popen(
        [str(engine / "pulumi-language-python"), f"127.0.0.1:{port}"],
        stdout=subprocess.PIPE,
        text=True,
        env={"PATH": "/usr/bin:/bin", "TOGETHER_LANGHOST_HEALTH_INTERVAL": HEALTH_INTERVAL},
    )
    assert process.stdout is not None
    host_port = int(process.stdout.readline())
    channel = grpc.insecure_channel(f"127.0.0.1:{host_port}")
    try:
        yield Host(process, language_pb2_grpc.LanguageRuntimeStub(channel), fake_engine, probes)
    finally:
        channel.close()
        process.kill()
        process.wait()
        fake_engine.stop(None)


def program_info(directory: Path, **options: Any) -> language_pb2.ProgramInfo:
    struct = struct_pb2.Struct()
    struct.update(options)
    return language_pb2.ProgramInfo(
        root_directory=str(directory),
        program_directory=str(directory),
        entry_point=".",
        options=struct,
    )


def rpc_error(call: Any, request: Any) -> str:
    with pytest.raises(grpc.RpcError) as failed:
        call(request)
    return str(failed.value.details())


def test_version_flag_prints_the_engine_version(engine: Path) -> None:
    out = subprocess.run(
        [str(engine / "pulumi-language-python"), "-version"],
        capture_output=True,
        text=True,
        check=True,
    )
    cli = subprocess.run(
        [str(engine / "pulumi"), "version"], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip().lstrip("v") == cli.stdout.strip().lstrip("v")


def test_our_build_lists_the_extras_its_tests_need(engine: Path) -> None:
    """The tests marked `langhost_extras` run only where the host lists those extras: were our
    own build to stop listing them, they would skip unnoticed."""
    ours = our_build_dir()
    if ours is None or ours.resolve() != engine.resolve():
        pytest.skip(f"the engine in {engine} is not this repo's build of tools/pulumi-engine")
    assert host_extras(engine) == {"cancel-exits", "health-interval"}


@pytest.mark.langhost_extras("cancel-exits")
def test_cancel_shuts_the_host_down(host: Host) -> None:
    assert host.stub.Cancel(empty_pb2.Empty()) == empty_pb2.Empty()
    wait_for(host.exited, timeout=10, what="the host to exit after Cancel")
    assert host.process.returncode == 0


@pytest.mark.langhost_extras("health-interval")
def test_host_exits_when_the_engine_goes_away(host: Host) -> None:
    """A CLI killed with SIGKILL never says goodbye: the health check is what ends the host."""
    # Stays up: three probes answered (each a health interval apart), and the host still runs.
    wait_for(lambda: host.probes.count >= 3, timeout=20, what="three health probes")
    assert not host.exited()
    host.engine.stop(None)
    wait_for(host.exited, timeout=20, what="the host to exit after the engine stopped")


def test_about_names_the_programs_interpreter(host: Host, tmp_path: Path) -> None:
    about = host.stub.About(
        language_pb2.AboutRequest(info=program_info(tmp_path, toolchain="pip", virtualenv=VENV))
    )
    assert Path(about.executable).parent == Path(VENV) / "bin"
    assert about.version == platform.python_version()


def test_program_dependencies_are_the_virtualenvs_packages(host: Host, tmp_path: Path) -> None:
    request = language_pb2.GetProgramDependenciesRequest(
        info=program_info(tmp_path, toolchain="pip", virtualenv=VENV),
        transitiveDependencies=True,
    )
    listed = host.stub.GetProgramDependencies(request).dependencies
    deps = {d.name.lower(): d.version for d in listed}
    assert deps["pulumi"] == "3.272.0"
    assert "httpx" in deps


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"virtualenv": 3}, "virtualenv option must be a string"),
        ({"typechecker": "ruff"}, "unsupported typechecker option: ruff"),
        ({"typechecker": ["mypy"]}, "typechecker option must be a string"),
        ({"toolchain": "conda"}, "unsupported toolchain option: conda"),
        ({"toolchain": True}, "toolchain option must be a string"),
    ],
)
def test_bad_runtime_options_are_errors(
    host: Host, tmp_path: Path, options: dict[str, Any], message: str
) -> None:
    request = language_pb2.GetProgramDependenciesRequest(info=program_info(tmp_path, **options))
    assert message in rpc_error(host.stub.GetProgramDependencies, request)


def test_typechecker_option_checks_the_program_before_it_runs(host: Host, tmp_path: Path) -> None:
    ran = tmp_path / "ran"
    (tmp_path / "__main__.py").write_text(
        f"from pathlib import Path\nPath({str(ran)!r}).touch()\ncount: int = 'three'\n"
    )
    request = language_pb2.RunRequest(
        project="typed",
        stack="dev",
        pwd=str(tmp_path),
        monitor_address="127.0.0.1:1",
        info=program_info(tmp_path, toolchain="pip", virtualenv=VENV, typechecker="mypy"),
    )
    assert "mypy failed" in rpc_error(host.stub.Run, request)
    assert not ran.exists(), "the program ran although it does not type-check"


def test_pulumi_about_shows_the_interpreter_and_the_dependencies(
    pulumi_env: PulumiEnv,
) -> None:
    work = pulumi_env.project(PROGRAMS / "counter")
    pulumi_env.stack(work)
    about = pulumi_env.run(work, "about", "--stack", "test")
    shown = about.stdout + about.stderr
    assert "not implemented" not in shown
    assert f"written in python: executable='{VENV}/bin/python'" in shown
    assert f"version='{platform.python_version()}'" in shown
    assert re.search(r"together-gpu-clusters\s+0\.1\.0", shown), shown


@pytest.mark.langhost_extras("health-interval")
@pytest.mark.parametrize("simulator", [{"time_scale": 30, "api_key": API_KEY}], indirect=True)
def test_host_exits_after_the_cli_is_killed(
    pulumi_env: PulumiEnv, simulator: SimulatorProcess
) -> None:
    """`kill -9` of the CLI alone (its process group; the host runs in a group of its own):
    the orphaned host notices at its next health check and exits."""
    pulumi_env.extra_env["TOGETHER_LANGHOST_HEALTH_INTERVAL"] = "500ms"
    _, work = cluster_stack(pulumi_env, simulator, {"train": dict(BASE)})
    up = start_cli(pulumi_env, work, "up", "--yes", "--skip-preview", "--stack", "test")
    try:
        wait_for(lambda: successful_posts(simulator) == 1, timeout=60, what="the create's POST")
        (host_pid,) = [p for p in session_pids(up) if command_of(p) == "pulumi-language-python"]
        kill_group(up)
        wait_for(lambda: command_of(host_pid) is None, timeout=30, what="the orphaned host to exit")
    finally:
        kill_session(up)


def command_of(pid: int) -> str | None:
    """The name of the process's executable, or None once it has gone (or is a zombie)."""
    proc = Path(f"/proc/{pid}")
    try:
        stat = (proc / "stat").read_text()
        argv0 = (proc / "cmdline").read_bytes().split(b"\0")[0].decode()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return None if stat[stat.rindex(")") + 2] == "Z" else Path(argv0).name
