"""The preemptible-capacity policy pack's policies, as pure checks; `policy/` runs them.

See docs/policy.md.
"""
