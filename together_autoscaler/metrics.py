"""Prometheus metrics, as the Cluster Autoscaler exposes them, so that every decision (those about
pods or nodes also an Event on them) can be graphed and alerted on. One registry per controller."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, start_http_server

from together_autoscaler.model import Decision

__all__ = ["Metrics"]


class Metrics:
    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        r = self.registry
        self.target = Gauge(
            "together_autoscaler_target_preemptible_gpus", "The preemptible target", registry=r
        )
        self.allocated = Gauge(
            "together_autoscaler_allocated_preemptible_gpus",
            "Preemptible GPUs Together has allocated",
            registry=r,
        )
        self.pending = Gauge(
            "together_autoscaler_pending_gpus",
            "nvidia.com/gpu requested by Unschedulable pods that need preemptible nodes",
            registry=r,
        )
        self.leader = Gauge(
            "together_autoscaler_leader", "1 while this replica holds the Lease", registry=r
        )
        self.lease_attempts = Counter(
            "together_autoscaler_lease_attempts", "Tries to take or renew the Lease", registry=r
        )
        self.decisions = Counter(
            "together_autoscaler_decisions",
            "Decisions by action and reason",
            ["action", "reason"],
            registry=r,
        )
        self.puts = Counter(
            "together_autoscaler_target_updates", "PUTs of the preemptible target", registry=r
        )
        self.errors = Counter(
            "together_autoscaler_errors", "Scans that failed", ["stage"], registry=r
        )

    def serve(self, port: int, address: str = "0.0.0.0") -> int:
        """Serve ``/metrics`` on ``port`` (0: any free port); returns the port."""
        server, _ = start_http_server(port, addr=address, registry=self.registry)
        return int(server.server_port)

    def observe(self, allocated: int, decision: Decision) -> None:
        self.target.set(decision.target)
        self.allocated.set(allocated)
        self.pending.set(decision.pending_gpus)
        self.decisions.labels(decision.action.value, decision.reason).inc()
