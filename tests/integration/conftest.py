"""Where the integration tests' Pulumi programs live, and the Kubernetes plugin's environment
(the other shared fixtures are in tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from testkit.pulumi_env import PulumiEnv, install_k8s_plugin, k8s_plugin_bin

PROGRAMS = Path(__file__).parent / "programs"


@pytest.fixture(scope="session")
def k8s_plugin_dir() -> Path:
    """The directory holding the built plugin; fails with the fix when it has not been built."""
    return k8s_plugin_bin()


@pytest.fixture
def k8s_env(pulumi_env: PulumiEnv, k8s_plugin_dir: Path) -> PulumiEnv:
    """The isolated environment, with the plugin in its Pulumi home's plugin cache (not on PATH,
    which the engine warns about on every run) and no ambient kubeconfig (a program reaches a
    cluster only through the kubeconfig it is given)."""
    install_k8s_plugin(pulumi_env.home)
    pulumi_env.extra_env["KUBECONFIG"] = str(pulumi_env.root / "no-kubeconfig")
    return pulumi_env
