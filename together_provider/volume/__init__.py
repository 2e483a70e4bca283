"""The SharedVolume resource kind: a Together shared volume that keeps checkpoints across
reclaims.

The same files as every resource kind's package (see `together_provider.cluster`): `schema`,
`rules`, `lifecycle`, `provider`, `resource`, `kind`.
"""
