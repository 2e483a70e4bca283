"""The preemptible-capacity policy pack's policies as pure checks over plain dicts, so tests run
them without the engine; `policy/` serves them (see docs/policy.md)."""
