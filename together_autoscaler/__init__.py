"""A preemptible-capacity autoscaler for one Together cluster (``python -m together_autoscaler``):
the Cluster Autoscaler's loop over Together's API, on `together_api` alone (no Pulumi, no provider
code) so it runs as a small controller on the cluster. See docs/autoscaling.md."""
