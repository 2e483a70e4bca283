"""The Cluster resource kind: a Together GPU cluster, `num_gpus` standard GPUs plus a
preemptible target.

Every resource kind's package has the same files: `schema` (the field table), `rules` (what a
change means; pure), `lifecycle` (create/adopt/update/read/delete over the API client; no
Pulumi), `provider` and `resource` (the dynamic-provider host's classes), `kind` (the entry in
`together_provider.registry`). `mapping` binds the field table to the wire models.
"""
