"""The one error type of the simulated API; the app turns it into Together's JSON error body."""

from __future__ import annotations

__all__ = ["SimError"]


class SimError(Exception):
    """A request the simulated API refuses, with its HTTP status and the offending field."""

    def __init__(self, status: int, message: str, *, param: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.param = param
