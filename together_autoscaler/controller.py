"""The thin loop around `decide`: observe Together and Kubernetes, decide, act, explain. Every I/O
of a scan is here, so the decision stays a pure function tested with no cluster."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from together_api.client import TogetherClient
from together_api.wire import ClusterUpdateRequest
from together_autoscaler.decide import decide
from together_autoscaler.metrics import Metrics
from together_autoscaler.model import (
    Action,
    ClusterState,
    Decision,
    Explanation,
    Limits,
    Memory,
    NodeState,
    Observed,
    PendingPod,
    Reason,
)
from together_autoscaler.recorder import Recorder

__all__ = ["Controller", "Elector", "Kube"]

log = logging.getLogger("together_autoscaler")


class Kube(Protocol):
    def observe(self) -> tuple[tuple[NodeState, ...], tuple[PendingPod, ...]]: ...
    def workload_pods(self, node: str) -> int: ...
    def mark(self, node: str) -> None: ...
    def unmark(self, node: str) -> None: ...
    def record(self, explanation: Explanation) -> None: ...


class Elector(Protocol):
    def try_acquire_or_renew(self) -> bool: ...
    def holds(self) -> bool: ...
    def release(self) -> None: ...


@dataclass
class Controller:
    """One scan per ``scan_interval`` seconds, only while this replica holds the Lease (renewed
    before each scan). Every decision is a metric; a scale up or down is a log line, a hold a log
    line when it begins or changes reason; Events go on the pods or nodes a decision concerns
    (docs/autoscaling.md lists the decisions that concern none), written by the `Recorder`
    (each pod told a reason once)."""

    together: TogetherClient
    kube: Kube
    elector: Elector
    metrics: Metrics
    cluster_id: str
    limits: Limits
    scan_interval: float = 10.0
    clock: Callable[[], float] = time.monotonic

    def __post_init__(self) -> None:
        self.memory = Memory()
        self.recorder = Recorder(self.kube.record, lambda error: self._failed("event", error))
        self.holding: Reason | None = None
        """The reason of the hold the last scan made (None: it made none): a hold is logged when
        it begins or its reason changes, not at every scan it lasts (one line an hour, not 360)."""

    def run(self, stop: threading.Event) -> None:
        """Scan every ``scan_interval`` until ``stop`` is set; then give the Lease up."""
        try:
            while not stop.is_set():
                self.tick()
                stop.wait(self.scan_interval)
        finally:
            self.elector.release()
            self.metrics.leader.set(0)

    def tick(self) -> Decision | None:
        """One scan if this replica leads; errors are logged and counted, never raised."""
        self.metrics.lease_attempts.inc()
        try:
            leading = self.elector.try_acquire_or_renew()
        except Exception as error:
            self._failed("lease", error)
            return None
        self.metrics.leader.set(1 if leading else 0)
        if not leading:
            return None
        try:
            return self.scan()
        except Exception as error:
            self._failed("scan", error)
            return None

    def scan(self) -> Decision:
        cluster = self.together.get_cluster(self.cluster_id)
        nodes, pending = self.kube.observe()
        observed = Observed(
            now=self.clock(),
            cluster=ClusterState(
                desired=cluster.desired_preemptible_gpus,
                allocated=cluster.allocated_preemptible_gpus,
                standard_gpus=cluster.num_gpus,
            ),
            limits=self.limits,
            nodes=nodes,
            pending=pending,
            memory=self.memory,
        )
        decision = decide(observed)
        self._act(decision, observed.cluster.desired, {n.name: n.gpus for n in nodes})
        self.recorder.record(decision.events, pending)
        self.memory = decision.memory
        self.metrics.observe(observed.cluster.allocated, decision)
        return decision

    def _act(self, decision: Decision, desired: int, gpus: dict[str, int]) -> None:
        """Carry ``decision`` out. Before any write the elector checks, without I/O, that the
        lease cannot have expired since its renewal: a replica whose scan outlasted it writes
        nothing.

        A scale down marks the chosen nodes first, looks again, and lowers the target after, in
        one PUT: a pod the scheduler bound to a node between the scan and its cordon keeps that
        node (unmarked, its GPUs not dropped), as the Cluster Autoscaler re-checks a node after
        tainting it. When the PUT fails the marks are taken back, so no node stays cordoned for
        a drop that never happened."""
        holding = decision.reason if decision.action is Action.HOLD else None
        if decision.action is Action.HOLD and holding != self.holding:
            log.warning("cluster %s: %s: %s (logged once until it changes)", self.cluster_id,
                        decision.reason, decision.message)  # fmt: skip
        elif decision.action in (Action.SCALE_UP, Action.SCALE_DOWN):
            log.info("cluster %s: %s: %s", self.cluster_id, decision.reason,
                     decision.message)  # fmt: skip
        self.holding = holding
        if decision.target != desired:
            if not self.elector.holds():
                raise RuntimeError(
                    "the Lease may have expired before writing (the scan outlasted it); "
                    "writing nothing, another replica may act now"
                )
            marked: list[str] = []
            try:
                for node in decision.scale_down_nodes:
                    self.kube.mark(node)
                    marked.append(node)
                target = decision.target + sum(gpus[n] for n in self._kept(marked))
                if target != desired:
                    request = ClusterUpdateRequest(num_preemptible_gpus=target)
                    self.together.update_cluster(self.cluster_id, request)
                    self.metrics.puts.inc()
            except Exception:
                for node in marked:
                    self._undo(node)
                raise

    def _kept(self, marked: list[str]) -> list[str]:
        """The just-marked nodes a workload pod reached before the cordon: each is unmarked (and
        dropped from ``marked``), and keeps its GPUs in the target."""
        busy = [node for node in marked if self.kube.workload_pods(node)]
        for node in busy:
            log.warning("cluster %s: node %s got a workload pod before its cordon; keeping it",
                        self.cluster_id, node)  # fmt: skip
            self._undo(node)
            marked.remove(node)
        return busy

    def _undo(self, node: str) -> None:
        try:
            self.kube.unmark(node)
        except Exception as error:
            self._failed("unmark", error)

    def _failed(self, stage: str, error: Exception) -> None:
        self.metrics.errors.labels(stage).inc()
        log.error("cluster %s: %s failed: %s: %s", self.cluster_id, stage,
                  type(error).__name__, error)  # fmt: skip
