"""Where the integration tests' Pulumi programs live, the Kubernetes plugin's environment and a
frozen-clock ``--kubernetes`` simulator (the other shared fixtures are in tests/conftest.py)."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from testkit.kube import kube_bin_or_skip
from testkit.pulumi_env import PulumiEnv, install_k8s_plugin, k8s_plugin_bin
from testkit.realnodes import done_beside_others, real_nodes_beside_others
from testkit.sim import SimulatorProcess
from tests.specs import CLUSTER_SPEC
from together_api.client import TogetherClient
from together_api.wire import ClusterCreateRequest

SIM_KEY = "sk-kube-test-77aa"
"""The API key of :func:`ready_cluster`'s simulator (a test checks no log shows it)."""

if TYPE_CHECKING:
    from tests.hosts import HostName

PROGRAMS = Path(__file__).parent / "programs"


@pytest.fixture(autouse=True)
def _real_nodes_beside_others(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test of a module that runs real nodes (it imports ``real_nodes_or_skip``) holds the
    tests' real-node lock shared, whatever starts its simulator (the drill, make demo): a test
    that kills a simulator holds it exclusively, and any start would sweep what it left. A test
    that asks for test_demo's ``real_nodes`` fixture (make demo with real nodes) holds it too."""
    if not (hasattr(request.module, "real_nodes_or_skip") or "real_nodes" in request.fixturenames):
        yield
        return
    fd = real_nodes_beside_others()
    try:
        yield
    finally:
        done_beside_others(fd)


@pytest.fixture(scope="session")
def k8s_plugin_dir() -> Path:
    """The directory holding the built plugin; fails with the fix when it has not been built."""
    return k8s_plugin_bin()


@pytest.fixture
def k8s_env(pulumi_env: PulumiEnv, k8s_plugin_dir: Path) -> PulumiEnv:
    """The isolated environment, with the plugin in its Pulumi home's plugin cache (not on PATH,
    which the engine warns about on every run) and no ambient kubeconfig (a program reaches a
    cluster only through the kubeconfig it is given)."""
    return _with_k8s_plugin(pulumi_env)


@pytest.fixture
def host_k8s_env(
    host_name: HostName, tmp_path: Path, engine: Path, k8s_plugin_dir: Path
) -> PulumiEnv:
    """`k8s_env` for the host a test is parametrized with (`host_name`, see tests/hosts.py):
    the native host's also has `pulumi-resource-together` on PATH."""
    from tests.hosts import HOSTS  # not at the top: tests.hosts imports this module's PROGRAMS

    return _with_k8s_plugin(HOSTS[host_name].env(tmp_path, engine))


def _with_k8s_plugin(env: PulumiEnv) -> PulumiEnv:
    install_k8s_plugin(env.home)
    env.extra_env["KUBECONFIG"] = str(env.root / "no-kubeconfig")
    return env


@pytest.fixture
def kube_bin() -> Path:
    """The built control plane's bin directory; skips the test when it has not been built."""
    return kube_bin_or_skip()


@pytest.fixture
def frozen(tmp_path: Path, kube_bin: Path) -> Iterator[SimulatorProcess]:
    """A --kubernetes simulator whose clock moves only when the test advances it."""
    with SimulatorProcess(tmp_path / "state", kubernetes=True, kube_bin=kube_bin,
                          time_scale=0) as sim:  # fmt: skip
        yield sim


@dataclass(frozen=True)
class ReadyCluster:
    sim: SimulatorProcess
    cluster_id: str
    kubeconfig: Path
    """The cluster's admin kubeconfig, on disk."""

    def together(self) -> TogetherClient:
        return TogetherClient(api_key=SIM_KEY, base_url=self.sim.base_url)


@pytest.fixture
def ready_cluster(tmp_path: Path, kube_bin: Path) -> Iterator[ReadyCluster]:
    """A frozen-clock --kubernetes simulator (API key :data:`SIM_KEY`) with one Ready cluster
    (one standard node, no preemptible target) whose control plane runs."""
    with SimulatorProcess(tmp_path / "state", kubernetes=True, kube_bin=kube_bin, time_scale=0,
                          api_key=SIM_KEY) as sim:  # fmt: skip
        with TogetherClient(api_key=SIM_KEY, base_url=sim.base_url) as together:
            request = ClusterCreateRequest(**CLUSTER_SPEC, cluster_name="b",
                                           billing_type="ON_DEMAND")  # fmt: skip
            cid = together.create_cluster(request).cluster_id
            sim.advance(360)
            sim.control_plane(cid)
            config = tmp_path / "admin.kubeconfig"
            config.write_text(base64.b64decode(together.get_cluster(cid).kube_config).decode())
        yield ReadyCluster(sim, cid, config)
