"""What a real node does to the host, one module each (network, cgroups, mounts, kernel settings,
processes, images) and the journal that records every change before it is made."""
