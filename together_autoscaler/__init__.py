"""A preemptible-capacity autoscaler for one Together cluster (``python -m together_autoscaler``).

It raises a cluster's preemptible target when pods that need preemptible nodes cannot be
scheduled, and lowers it, with Together's targeted scale-down, when a preemptible node has been
idle for the unneeded window: the Cluster Autoscaler's loop over Together's API. It builds on
`together_api` alone (no Pulumi, no provider code).

Modules: ``model`` (what one scan observed and what it decides; plain data), ``decide`` (the
decision, a pure function), ``pods`` (what a pod needs and where it may run), ``kube`` (observe
and act on the API server), ``leader`` (a coordination.k8s.io Lease), ``metrics`` (Prometheus),
``controller`` (the thin loop), ``cli`` (the command). See docs/autoscaling.md.
"""
