"""The two hosts that run a kind's lifecycle for the engine, side by side: `dynamic.py` (Pulumi's
dynamic provider) and `native/` (our plugin, `pulumi-resource-together`); `resource.py` is the
program side both share."""
