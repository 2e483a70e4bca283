"""Where the integration tests' Pulumi programs live, and the Kubernetes plugin's environment
(the other shared fixtures are in tests/conftest.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from testkit.pulumi_env import PulumiEnv, k8s_plugin_bin

PROGRAMS = Path(__file__).parent / "programs"


@pytest.fixture(scope="session")
def k8s_plugin_dir() -> Path:
    """The directory holding the built plugin; fails with the fix when it has not been built."""
    return k8s_plugin_bin()


@pytest.fixture
def k8s_env(pulumi_env: PulumiEnv, k8s_plugin_dir: Path) -> PulumiEnv:
    """The isolated environment, with the plugin's directory on PATH and no ambient kubeconfig
    (a program reaches a cluster only through the kubeconfig it is given)."""
    pulumi_env.extra_env.update(
        {
            "PATH": os.pathsep.join(
                [str(pulumi_env.bin_dir), str(k8s_plugin_dir), os.environ.get("PATH", "")]
            ),
            "KUBECONFIG": str(pulumi_env.root / "no-kubeconfig"),
        }
    )
    return pulumi_env
