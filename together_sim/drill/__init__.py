"""The preemption drill (`python -m together_sim.drill`): a user's own workload on real nodes, its
nodes reclaimed, and a verdict on whether it keeps the drain-window contract (docs/drill.md)."""
