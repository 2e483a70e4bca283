"""A real Kubernetes control plane per simulated cluster (``--kubernetes``): its processes,
certificates, API client, pod clock and view of the world. The nodes stand on it, and the mirror
(:mod:`together_sim.mirror`) on both; see docs/kubernetes-sim.md."""
