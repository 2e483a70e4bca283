"""A real Kubernetes control plane per simulated cluster (``python -m together_sim --kubernetes``),
so workloads, drains and the autoscaler are tested against a real API server, not a fake one.
It uses only ``together_api`` and the simulator's own modules; see docs/kubernetes-sim.md."""
