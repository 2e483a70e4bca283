"""Together AI GPU clusters as code: a Pulumi dynamic provider with a preemptible target."""
