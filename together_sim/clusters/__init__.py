"""The cluster, as ``volumes`` is the volume: its state (``state``), how a create or an update
is checked and applied (``operations``), how it moves over time (``lifecycle``, ``nodes``,
``reclaims``) and its wire shape (``render``)."""
