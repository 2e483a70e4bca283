"""A TogetherClient over httpx.MockTransport with a fake clock, for the client's unit tests.

`make_client` and `fake_time` are fixtures in `tests/unit/conftest.py`; `KEY` is the API key
every such client sends, so a test can assert the header.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from typing import Any

import httpx

from tests.fake_time import FakeTime
from together_api.client import TogetherClient
from together_api.retry import RetryPolicy

KEY = "tg-secret-key-0123456789"
BASE = "https://api.test/v1"
Handler = Callable[[httpx.Request], httpx.Response]
MakeClient = Callable[..., TogetherClient]


def client_maker(fake_time: FakeTime) -> Iterator[MakeClient]:
    """Yield `make(handler, base_url=BASE, **retry_policy)`; closes every client made."""
    clients: list[TogetherClient] = []

    def make(handler: Handler, base_url: str = BASE, **policy: Any) -> TogetherClient:
        client = TogetherClient(
            KEY,
            base_url,
            transport=httpx.MockTransport(handler),
            retry=RetryPolicy(rng=random.Random(0), **policy),
            sleep=fake_time.sleep,
            clock=fake_time.clock,
        )
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()
