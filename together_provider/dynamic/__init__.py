"""The dynamic-provider host: each kind's provider class (`provider.py`) and the program-side
Resource (`resource.py`). Beside `hosts/` (the native host, which reads the registry), so the
kinds' old-state modules and the generated classes build on it without a circle."""
