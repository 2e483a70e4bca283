"""The machinery every resource kind shares; a kind's package declares only what is its own.

- `fields`, `validators`, `schema`: declare each field once (a field table) and derive the spec
  types, policies, config keys, outputs and docs from it;
- `rulebook`: check and plan (what a change means) over any field table, plus its `Rule`s; pure;
- `lifecycle`: the one contract both hosts drive (`Lifecycle`) and its shared base;
- `dynamic`: the dynamic-provider host over a `Kind`: each kind's provider class and Resource base;
- `fixes`: the Pulumi wording both hosts give the client for its errors' fixes;
- `kind`: what describes one resource kind (the registry is `together_provider.registry`).
"""
