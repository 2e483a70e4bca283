"""What the nodes and the mirror share of a control plane: its API client, its certificates, the
pod clock and the world's view of a cluster. It imports no node and no mirror; the nodes
(:mod:`together_sim.nodes`) stand on it, and :mod:`together_sim.kube` on both."""
