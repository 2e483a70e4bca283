"""The resend rule, for Together's API and GitHub's alike: what a failed request may send again
depends on what the server may already have done, never on the HTTP library that saw it fail."""

from __future__ import annotations

import enum

__all__ = ["Failure", "may_resend"]


class Failure(enum.Enum):
    """How one try of a request failed, as far as the server's side of it goes."""

    RATE_LIMITED = "rate limited"
    """Refused before any work (HTTP 429, or a rate limit by its headers)."""
    NEVER_SENT = "never sent"
    """Failed before the request left (no connection, no pool slot)."""
    ANSWERED = "answered"
    """An answer another try may cure (a 5xx, a 408): the server may have acted."""
    CONNECTION_LOST = "connection lost"
    """Sent, and no answer came back: the server may have acted."""


def may_resend(failure: Failure, *, idempotent: bool) -> bool:
    """Whether another try may follow: a rate limit or a request that never left did nothing,
    so any method goes again; otherwise the server may have acted, so only an idempotent
    request (GET, PUT, DELETE) does. A POST is never sent blind a second time."""
    return failure in (Failure.RATE_LIMITED, Failure.NEVER_SENT) or idempotent
