"""A real Kubernetes control plane per simulated cluster (``--kubernetes``), kept in step with the
world: its processes (:mod:`~together_sim.kube.processes`), the hub that hands each cluster's view
to its mirror (:mod:`~together_sim.kube.mirror`), which asks the node provider for the nodes."""
