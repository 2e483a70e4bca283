"""Every scenario here runs once per host (`dynamic`, `native`): the `host` fixture says which,
and `env` is a fresh isolated Pulumi environment that host's programs run in (tests/hosts.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from testkit.pulumi_env import PulumiEnv
from tests.hosts import HOSTS, Host


@pytest.fixture(params=sorted(HOSTS))
def host(request: pytest.FixtureRequest) -> Host:
    return HOSTS[request.param]


@pytest.fixture
def env(host: Host, tmp_path: Path, engine: Path) -> PulumiEnv:
    return host.env(tmp_path, engine)
