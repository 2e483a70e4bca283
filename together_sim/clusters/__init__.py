"""The cluster, as ``volumes`` is the volume: its state (``state``), how a create or an update
is checked and applied (``operations``) and its wire shape (``render``). How clusters move over
time, sharing a region's capacity, is :class:`together_sim.model.World`'s."""
