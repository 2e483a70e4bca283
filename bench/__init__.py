"""Benchmarks of the Cluster provider through the real engine against the local simulator.

`make bench` (or `python -m bench [--quick]`) writes a Markdown and a JSON report to `bench/out/`.
Reuses the test harness (`testkit.pulumi_env`, `testkit.sim`) so a benchmark runs exactly what the
tests run: isolated Pulumi home, file backend, the simulator as a subprocess on loopback.
"""
