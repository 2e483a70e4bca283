"""`together_autoscaler.controller`: the loop around `decide`, with Together over a mock transport
(retries on a fake clock), a recording stand-in for the API server, and the real metrics server.

What Kubernetes itself does with the marks, the Lease and the Events is tested on the simulator's
control plane (tests/integration/test_autoscaler.py)."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field, replace
from typing import Any

import httpx
import pytest

from tests.mock_client import KEY, MakeClient
from together_autoscaler.controller import Controller
from together_autoscaler.metrics import Metrics
from together_autoscaler.model import Action, Explanation, Limits, NodeState, PendingPod

LIMITS = Limits(min_gpus=0, max_gpus=64, unneeded_seconds=0)


@dataclass
class FakeKube:
    nodes: tuple[NodeState, ...] = ()
    pending: tuple[PendingPod, ...] = ()
    calls: list[tuple[str, str]] = field(default_factory=list)

    def observe(self) -> tuple[tuple[NodeState, ...], tuple[PendingPod, ...]]:
        return self.nodes, self.pending

    def workload_pods(self, node: str) -> int:
        return sum(n.workload_pods for n in self.nodes if n.name == node)

    def mark(self, node: str) -> None:
        self.calls.append(("mark", node))

    def unmark(self, node: str) -> None:
        self.calls.append(("unmark", node))

    def record(self, explanation: Explanation) -> None:
        self.calls.append(("event", f"{explanation.reason}/{explanation.name}"))


@dataclass
class FakeElector:
    """``answers``: one per renewal (the list runs out on one too many); ``live``: what
    :meth:`holds` says after a successful one (False: the scan outlasted the lease)."""

    answers: list[bool] = field(default_factory=lambda: [True] * 100)
    live: bool = True
    leading: bool = False
    released: bool = False

    def try_acquire_or_renew(self) -> bool:
        self.leading = self.answers.pop(0)
        return self.leading

    def holds(self) -> bool:
        return self.leading and self.live

    def release(self) -> None:
        self.released = True


class FakeTogether:
    """GET and PUT of one cluster; ``fail_puts`` answers the first PUTs with HTTP 503."""

    def __init__(self, desired: int = 0, fail_puts: int = 0, status: int = 503) -> None:
        self.desired, self.fail_puts, self.status = desired, fail_puts, status
        self.puts: list[dict[str, Any]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if request.method == "PUT":
            if self.fail_puts:
                self.fail_puts -= 1
                return httpx.Response(self.status, json={"error": {"message": f"no: {KEY}"}})
            body = json.loads(request.content)
            self.puts.append(body)
            self.desired = body["num_preemptible_gpus"]
        return httpx.Response(200, json=self.cluster())

    def cluster(self) -> dict[str, Any]:
        return {
            "cluster_id": "c1",
            "status": "Ready",
            "gpu_type": "H100_SXM",
            "num_gpus": 8,
            "desired_preemptible_gpus": self.desired,
            "allocated_preemptible_gpus": self.desired,
        }


def controller(
    make_client: MakeClient, together: FakeTogether, kube: FakeKube, elector: FakeElector
) -> Controller:
    return Controller(
        together=make_client(together),
        kube=kube,
        elector=elector,
        metrics=Metrics(),
        cluster_id="c1",
        limits=LIMITS,
        clock=lambda: 1000.0,
    )


BUSY_64 = tuple(NodeState(f"n{i}", 8, used_gpus=8, workload_pods=1) for i in range(8))


def burst(n: int) -> tuple[PendingPod, ...]:
    return tuple(PendingPod("default", f"p{i}", f"u{i}", 8, True) for i in range(n))


def test_a_burst_is_one_put_and_an_event_on_each_pod(make_client: MakeClient) -> None:
    together, kube = FakeTogether(), FakeKube(pending=burst(3))
    decision = controller(make_client, together, kube, FakeElector()).tick()
    assert decision is not None and decision.action is Action.SCALE_UP
    assert together.puts == [{"num_preemptible_gpus": 24}]
    assert kube.calls == [("event", f"TriggeredScaleUp/p{i}") for i in range(3)]


def test_a_hold_is_told_to_each_pod_once_across_scans(make_client: MakeClient) -> None:
    together, kube = FakeTogether(desired=64), FakeKube(nodes=BUSY_64, pending=burst(2))
    loop = controller(make_client, together, kube, FakeElector())
    for _ in range(3):
        decision = loop.tick()
        assert decision is not None and decision.reason == "MaxPreemptibleGpusReached"
    assert kube.calls == [("event", f"MaxPreemptibleGpusReached/p{i}") for i in range(2)]


def test_a_retryable_failure_is_retried_by_the_client(make_client: MakeClient) -> None:
    together = FakeTogether(fail_puts=2)
    controller(make_client, together, FakeKube(pending=burst(1)), FakeElector()).tick()
    assert together.puts == [{"num_preemptible_gpus": 8}]


def test_scale_down_marks_the_node_before_the_put_and_unmarks_it_when_the_put_fails(
    make_client: MakeClient,
) -> None:
    together = FakeTogether(desired=16)
    kube = FakeKube(nodes=(NodeState("idle", 8), NodeState("busy", 8, used_gpus=8,
                                                          workload_pods=1)))  # fmt: skip
    loop = controller(make_client, together, kube, FakeElector())
    loop.tick()  # first sight of the idle node (the window is 0 s: due at once)
    assert together.puts == [{"num_preemptible_gpus": 8}] and kube.calls[0] == ("mark", "idle")

    refused = FakeTogether(desired=16, fail_puts=1, status=400)
    kube = FakeKube(nodes=(NodeState("idle", 8),))
    assert controller(make_client, refused, kube, FakeElector()).tick() is None
    assert kube.calls == [("mark", "idle"), ("unmark", "idle")] and refused.puts == []


@dataclass
class RacingKube(FakeKube):
    """The scheduler binds a pod to ``node`` between the scan and the cordon."""

    node: str = ""

    def mark(self, node: str) -> None:
        super().mark(node)
        if node == self.node:
            self.nodes = tuple(replace(n, workload_pods=1, used_gpus=8) if n.name == node else n
                               for n in self.nodes)  # fmt: skip


def test_a_node_a_pod_reached_before_its_cordon_is_unmarked_and_kept(
    make_client: MakeClient,
) -> None:
    together = FakeTogether(desired=16)
    kube = RacingKube(nodes=(NodeState("a", 8), NodeState("b", 8)), node="a")
    decision = controller(make_client, together, kube, FakeElector()).tick()
    assert decision is not None and set(decision.scale_down_nodes) == {"a", "b"}
    assert together.puts == [{"num_preemptible_gpus": 8}]  # only b's GPUs dropped
    assert ("unmark", "a") in kube.calls and ("unmark", "b") not in kube.calls

    both = RacingKube(nodes=(NodeState("a", 8),), node="a")
    racing = FakeTogether(desired=8)
    controller(make_client, racing, both, FakeElector()).tick()
    assert racing.puts == [] and both.calls[:2] == [("mark", "a"), ("unmark", "a")]


def test_a_replica_without_the_lease_does_nothing(make_client: MakeClient) -> None:
    together, kube = FakeTogether(), FakeKube(pending=burst(3))
    assert controller(make_client, together, kube, FakeElector([False])).tick() is None
    assert together.puts == [] and kube.calls == []


def test_a_lease_that_may_have_expired_before_the_write_writes_nothing(
    make_client: MakeClient,
) -> None:
    together, kube = FakeTogether(), FakeKube(pending=burst(3))
    elector = FakeElector([True], live=False)
    assert controller(make_client, together, kube, elector).tick() is None
    assert together.puts == [] and kube.calls == []


def test_a_writing_scan_renews_the_lease_once(make_client: MakeClient) -> None:
    together, kube = FakeTogether(desired=8), FakeKube(nodes=(NodeState("idle", 8),))
    elector = FakeElector([True])  # a second renewal would find the list empty
    decision = controller(make_client, together, kube, elector).tick()
    assert decision is not None and decision.action is Action.SCALE_DOWN
    assert together.puts == [{"num_preemptible_gpus": 0}] and elector.answers == []


def test_the_api_key_never_reaches_a_log(
    make_client: MakeClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    together = FakeTogether(fail_puts=10, status=400)  # its error body echoes the key
    loop = controller(make_client, together, FakeKube(pending=burst(1)), FakeElector())
    assert loop.tick() is None
    assert "scan failed" in caplog.text and "HTTP 400" in caplog.text
    assert KEY not in caplog.text


def test_metrics_are_scraped_from_the_port(make_client: MakeClient) -> None:
    together, kube = FakeTogether(), FakeKube(pending=burst(2))
    loop = controller(make_client, together, kube, FakeElector())
    port = loop.metrics.serve(0, "127.0.0.1")
    loop.tick()
    text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=5).text
    assert "together_autoscaler_target_preemptible_gpus 16.0" in text
    assert "together_autoscaler_pending_gpus 16.0" in text
    assert "together_autoscaler_allocated_preemptible_gpus 0.0" in text
    assert "together_autoscaler_leader 1.0" in text
    assert (
        'together_autoscaler_decisions_total{action="scale_up",reason="TriggeredScaleUp"} 1.0'
        in text
    )
    assert "together_autoscaler_target_updates_total 1.0" in text


def test_a_hold_is_logged_when_it_begins_or_changes_not_every_scan(
    make_client: MakeClient, caplog: pytest.LogCaptureFixture
) -> None:
    """An idle node kept while a pending pod would fit on it (ScaleDownPendingPods), scan after
    scan: one warning; after a scan without the hold, the next one is a new hold and is logged
    again."""
    caplog.set_level(logging.INFO, logger="together_autoscaler")
    fits = (PendingPod("default", "p", "u", 8, needs_preemptible=False, may_use_preemptible=True),)
    idle, busy = (NodeState("n1", 8),), (NodeState("n1", 8, workload_pods=1),)
    kube = FakeKube()
    loop = controller(make_client, FakeTogether(desired=8), kube, FakeElector())
    reasons = []
    for nodes, pending in [(idle, fits)] * 3 + [(busy, ())] + [(idle, fits)] * 2:
        kube.nodes, kube.pending = nodes, pending
        decision = loop.tick()
        assert decision is not None
        reasons.append(decision.reason)
    assert reasons == ["ScaleDownPendingPods"] * 3 + ["NoChange"] + ["ScaleDownPendingPods"] * 2
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warned) == 2
    assert all("ScaleDownPendingPods" in line for line in warned)
