"""Workloads the drill judges in tests/integration/test_drill.py: each one a way a process keeps
or breaks the drain-window contract, run on the Python image's real nodes."""
