"""The native Pulumi plugin for Together (`pulumi-resource-together`, `plugin.py`): each kind of
the registry as `together:index:<Kind>`, for any language. A Python program imports its classes
from `together_provider.native`."""
