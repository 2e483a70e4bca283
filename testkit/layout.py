"""Where each package of the product lives in the repository: at the top, except the worker
library, which is a distribution of its own in worker/ (installed alone into images)."""

from __future__ import annotations

from pathlib import Path
from typing import Final

REPO: Final = Path(__file__).resolve().parent.parent
WORKER_DISTRIBUTION: Final = REPO / "worker"
"""The worker library's distribution: its pyproject.toml and the together_worker package."""


def package_dir(name: str) -> Path:
    """The directory of the top-level package `name` (together_worker is under worker/)."""
    return (WORKER_DISTRIBUTION if name == "together_worker" else REPO) / name
