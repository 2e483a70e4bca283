"""Every cluster's control plane kept in step with the simulated world (``--kubernetes``): the hub
(:mod:`~together_sim.mirror.hub`) hands each cluster's view to its mirror
(:mod:`~together_sim.mirror.cluster`), which asks the node provider for the cluster's nodes."""
