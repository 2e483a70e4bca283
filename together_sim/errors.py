"""The one error type of the simulated API; the app turns it into Together's JSON error body."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

__all__ = ["SimError", "found"]

V = TypeVar("V")


class SimError(Exception):
    """A request the simulated API refuses, with its HTTP status and the offending field."""

    def __init__(self, status: int, message: str, *, param: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.param = param


def found(objects: Mapping[str, V], object_id: str, kind: str) -> V:
    """``objects[object_id]``, or the API's 404 naming the ``kind`` (param ``<kind>_id``)."""
    value = objects.get(object_id)
    if value is None:
        raise SimError(404, f"{kind} {object_id} not found", param=f"{kind}_id")
    return value
