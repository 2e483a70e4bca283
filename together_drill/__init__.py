"""The preemption drill (`python -m together_drill`): a user's own workload, its nodes reclaimed
for real, and a verdict on whether it keeps the drain-window contract (docs/drill.md). A client
of a cluster: it starts a local world through the simulator, or drills an existing cluster
through a kubeconfig."""
