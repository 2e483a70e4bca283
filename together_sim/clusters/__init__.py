"""The simulated cluster, as ``volumes`` is the volume: one package so a cluster's state, checks,
time and wire shape change together (its modules: CONTRIBUTING.md "Where things live")."""
