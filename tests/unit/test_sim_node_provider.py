"""The node provider: one object makes, finds and deletes a cluster's nodes of both kinds, against
an API server stand-in (``httpx.MockTransport``) and a pool stand-in whose slots a test sets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import httpx

from together_sim.nodes import NODE_LABEL, SimNode
from together_sim.nodes.kwok import KwokNode
from together_sim.nodes.pool import RealNodePool
from together_sim.nodes.provider import NodeProvider, is_real
from together_sim.nodes.real import JoinedPlane
from together_sim.plane.client import KubeApi
from together_sim.plane.pki import ClusterPki
from together_sim.plane.pods import PodClock
from together_sim.plane.views import NodeView

Obj = dict[str, Any]


class ApiServer:
    """Nodes by name, no pods; every request kept as (method, path)."""

    def __init__(self) -> None:
        self.nodes: dict[str, Obj] = {}
        self.calls: list[tuple[str, str]] = []

    def handle(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path
        self.calls.append((request.method, path))
        if path == "/api/v1/pods":
            return httpx.Response(200, json={"items": []})
        if request.method == "POST" and path == "/api/v1/nodes":
            node = json.loads(request.content)
            self.nodes[node["metadata"]["name"]] = node
            return httpx.Response(201, json=node)
        if request.method == "DELETE" and path.startswith("/api/v1/nodes/"):
            self.nodes.pop(path.rsplit("/", 1)[1], None)
            return httpx.Response(200, json={})
        return httpx.Response(404, json={})


class Pool:
    """A pool whose slots are all held: ``acquire`` makes no real node; ``asked`` counts."""

    reuses = True

    def __init__(self) -> None:
        self.asked: list[str] = []

    def acquire(self, *, name: str, **_: Any) -> None:
        self.asked.append(name)


def _node(node_id: str, *, preemptible: bool = False) -> NodeView:
    return NodeView(node_id, preemptible, True, False, None, "", "")


def _setup(pool: Pool | None = None) -> tuple[NodeProvider, KubeApi, PodClock, ApiServer]:
    server = ApiServer()
    api = KubeApi(
        httpx.Client(base_url="https://api", transport=httpx.MockTransport(server.handle))
    )
    plane = JoinedPlane(Path("/nowhere"), 6443, ClusterPki(Path("/nowhere/pki")))
    provider = NodeProvider("c1", plane, cast(RealNodePool, pool) if pool is not None else None)
    return provider, api, PodClock(api), server


def test_without_real_nodes_the_provider_makes_a_kwok_node_and_returns_it_typed() -> None:
    provider, api, pods, server = _setup()
    made = provider.make(api, pods, "H100", _node("n1", preemptible=True), {"n1"})
    assert isinstance(made, KwokNode) and isinstance(made, SimNode)
    assert made.name == "n1" and made.body["metadata"]["labels"][NODE_LABEL] == "true"
    assert server.nodes["n1"]["metadata"]["labels"]["together.ai/compute-class"] == "preemptible"
    assert not is_real(server.nodes["n1"]) and not provider.has("n1")
    assert provider.with_kubelet() == frozenset() and not provider.registering


def test_a_full_pool_gives_a_kwok_node_and_delete_undoes_the_make() -> None:
    pool = Pool()
    provider, api, pods, server = _setup(pool)
    made = provider.make(api, pods, "H100", _node("n1"), {"n1"})
    assert pool.asked == ["n1"]  # the real kind was asked first
    assert isinstance(made, KwokNode) and set(server.nodes) == {"n1"}
    assert provider.delete(api, pods, server.nodes["n1"]) == []
    assert server.nodes == {} and ("DELETE", "/api/v1/nodes/n1") in server.calls


class Real:
    """A real node stand-in: not registered until told, failing when told."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.registered = False
        self.failure = ""
        self.may = False

    def ready(self, k8s: Obj | None) -> bool:
        self.registered = self.registered or k8s is not None
        return self.registered

    def may_go(self, pods: list[Obj], drained_at: float | None, now: float) -> bool:
        return self.may

    def status(self) -> dict[str, Any]:
        return {"state": "running"}


class Slots:
    """A pool with one slot: the first node asked is real, the rest wait or are KWOK. ``once``:
    the slot is given once (``--real-nodes-once``)."""

    def __init__(self, *, once: bool = False) -> None:
        self.held: dict[str, Real] = {}
        self.released: list[str] = []
        self.reuses = not once
        self.free = True

    def acquire(self, *, name: str, **_: Any) -> Real | None:
        if not self.free:
            return None
        self.free = False
        self.held[name] = Real(name)
        return self.held[name]

    def release(self, node: Real) -> list[str]:
        self.released.append(node.name)
        self.held.pop(node.name, None)
        self.free = self.reuses
        return []


def test_a_real_node_is_made_while_a_slot_is_free_and_goes_only_once_it_may() -> None:
    pool = Slots()
    provider, api, pods, server = _setup(cast(Pool, pool))
    real = provider.make(api, pods, "H100", _node("n1"), {"n1", "n2"})
    assert isinstance(real, Real) and provider.has("n1") and provider.registering
    assert provider.with_kubelet() == {"n1"}
    # The world removed n1 while n2 waits for its slot: no KWOK node is made meanwhile.
    assert provider.make(api, pods, "H100", _node("n2"), {"n2"}) is None and server.nodes == {}
    provider.prune(api, pods, {}, {"n2"})
    assert pool.released == []  # its pods' grace periods are not over
    real.may = True
    provider.prune(api, pods, {}, {"n2"})
    assert pool.released == ["n1"] and not provider.has("n1")
    assert isinstance(provider.make(api, pods, "H100", _node("n2"), {"n2"}), Real)


def test_with_slots_given_once_a_node_does_not_wait_for_a_leaving_real_node() -> None:
    """--real-nodes-once: n1's slot will not be n2's, so n2 is a KWOK node at once, and stays
    one once n1 has gone."""
    pool = Slots(once=True)
    provider, api, pods, server = _setup(cast(Pool, pool))
    real = provider.make(api, pods, "H100", _node("n1"), {"n1", "n2"})
    assert isinstance(real, Real)
    made = provider.make(api, pods, "H100", _node("n2"), {"n2"})
    assert isinstance(made, KwokNode) and set(server.nodes) == {"n2"}
    real.may = True
    provider.prune(api, pods, {}, {"n2", "n3"})
    assert pool.released == ["n1"]
    assert isinstance(provider.make(api, pods, "H100", _node("n3"), {"n2", "n3"}), KwokNode)


def test_a_real_node_that_could_not_start_is_a_kwok_node_from_then_on() -> None:
    pool = Slots()
    provider, api, pods, server = _setup(cast(Pool, pool))
    real = provider.make(api, pods, "H100", _node("n1"), {"n1"})
    assert isinstance(real, Real)
    real.failure = "containerd exited with 1"
    provider.adopt(api, {})
    assert pool.released == ["n1"] and not provider.registering
    assert isinstance(provider.make(api, pods, "H100", _node("n1"), {"n1"}), KwokNode)
    assert set(server.nodes) == {"n1"}
