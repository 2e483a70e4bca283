"""Drivers shared by the tests and the benchmarks: the simulator as a process and an isolated
Pulumi environment on the built engine. Dev-only: not part of the installed package."""
