"""`python -m together_sim.drill`, the drill's old name: a thin alias of `python -m together_drill`
(the drill is a client of a cluster, not part of the simulator; docs/drill.md)."""
