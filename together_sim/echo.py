"""Wire fields stored once, as the API's own request models: what a response echoes and what a
PUT changes are derived from the models' fields, so a field new to the API needs no edit here."""

from __future__ import annotations

from collections.abc import Collection
from functools import cache
from typing import Any, TypeVar

from pydantic import BaseModel

__all__ = ["echoed", "updated"]

M = TypeVar("M", bound=BaseModel)


def echoed(
    stored: BaseModel, response: type[BaseModel], hidden: Collection[str] = ()
) -> dict[str, Any]:
    """The stored fields that ``response`` has too (as JSON), set ones only: the API echoes
    them back as sent. ``hidden``: shared fields the real API keeps to itself."""
    shared = _shared(type(stored), response, frozenset(hidden))
    return stored.model_dump(mode="json", include=shared, exclude_none=True)


@cache
def _shared(stored: type[BaseModel], response: type[BaseModel], hidden: frozenset[str]) -> set[str]:
    """The field names two models share: fixed per pair of models, so computed once, not on
    every rendered cluster of every listing."""
    return set(stored.model_fields) & set(response.model_fields) - hidden


def updated(stored: M, update: BaseModel, skip: Collection[str] = ()) -> M:
    """``stored`` with every field ``update`` sets (to a value, not null) and ``stored`` has:
    a PUT's "omitted = keep". ``skip``: fields the caller applies itself."""
    changes = {
        name: value
        for name in update.model_fields_set - set(skip)
        if name in type(stored).model_fields and (value := getattr(update, name)) is not None
    }
    return stored.model_copy(update=changes)
