"""Where the integration tests' Pulumi programs live (fixtures are in tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path

PROGRAMS = Path(__file__).parent / "programs"
