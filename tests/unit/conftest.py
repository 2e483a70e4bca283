"""Fixtures for unit tests: the in-process simulator, and mock-transport clients on a fake clock."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fake_time import FakeTime
from tests.mock_client import MakeClient, client_maker
from tests.sim_app import Sim


@pytest.fixture
def sim(tmp_path: Path) -> Iterator[Sim]:
    """A fresh in-process simulator with a frozen clock and its own state dir."""
    s = Sim(tmp_path / "state")
    yield s
    s.http.close()


@pytest.fixture
def fake_time() -> FakeTime:
    return FakeTime(start=1000.0)


@pytest.fixture
def make_client(fake_time: FakeTime) -> Iterator[MakeClient]:
    """`make_client(handler, base_url=..., **retry_policy)`: a client over a MockTransport."""
    yield from client_maker(fake_time)


@pytest.fixture
def mocks_loop() -> Iterator[asyncio.AbstractEventLoop]:
    """An event loop of its own for a program run under ``pulumi.runtime`` mocks: its Outputs
    are futures of the current loop, and an earlier test's ``asyncio.run`` leaves none set. Left
    open: closing it would drop the mocks' last RPCs unawaited."""
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    yield loop
