"""Injected faults and the request log, only reachable through ``/_sim``, so tests can prove a
client survives 429s, 5xx and lost answers, and count exactly the API traffic it produced."""

from __future__ import annotations

import json
import random
import threading
from collections import Counter
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["FaultInjector", "Faults", "LoggedRequest", "RequestLog"]


class Faults(BaseModel):
    """Body of ``PUT /_sim/faults``; every field optional."""

    model_config = ConfigDict(extra="forbid")

    error_rate: float = Field(0.0, ge=0.0, le=1.0)
    error_statuses: list[int] = Field(default_factory=lambda: [500])
    retry_after: float | None = Field(None, ge=0.0)
    latency_ms: int = Field(0, ge=0)
    drop_rate: float = Field(0.0, ge=0.0, le=1.0)
    lost_answer_rate: float = Field(0.0, ge=0.0, le=1.0)
    """Serve the request, then close the connection before answering: the work is done but the
    client cannot know (the case a POST must not blindly retry)."""
    lost_answer_methods: list[str] | None = None
    """Limit lost answers to these HTTP methods (default: every method)."""
    fail_provisioning: bool = False


class FaultInjector:
    """Decides, per request, whether to drop it, fail it or let it through."""

    def __init__(self, seed: int | None = None) -> None:
        self.faults = Faults()
        self._rng = random.Random(seed)

    def lose_answer(self, method: str) -> bool:
        """Whether to drop the answer of a request that was served successfully."""
        faults = self.faults
        if faults.lost_answer_methods is not None and method not in faults.lost_answer_methods:
            return False
        return bool(faults.lost_answer_rate) and self._rng.random() < faults.lost_answer_rate

    def decide(self) -> Literal["drop"] | int | None:
        """``"drop"``, an HTTP status to fail with, or ``None`` to serve normally."""
        faults = self.faults
        if faults.drop_rate and self._rng.random() < faults.drop_rate:
            return "drop"
        if faults.error_rate and faults.error_statuses and self._rng.random() < faults.error_rate:
            return self._rng.choice(faults.error_statuses)
        return None


@dataclass(frozen=True)
class LoggedRequest:
    method: str
    path: str
    status: int
    body: str | None = None
    """A PUT's body as it arrived: what a test checks the update carried."""


def _json_or_text(body: str) -> object:
    """A body as its JSON, else as its text (a malformed PUT is logged too: it got its 4xx)."""
    try:
        return json.loads(body)
    except ValueError:
        return body


class RequestLog:
    """Every ``/v1`` request in order, as (method, path template, status); 0 = dropped. Admin
    calls are never recorded (and never faulted), so a test counts only the client's traffic."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: list[LoggedRequest] = []

    def record(self, method: str, path: str, status: int, body: str | None = None) -> None:
        with self._lock:
            self._entries.append(LoggedRequest(method, path, status, body))

    def reset(self) -> None:
        with self._lock:
            self._entries.clear()

    def snapshot(self) -> dict[str, object]:
        with self._lock:
            entries = list(self._entries)
        counts = Counter((e.method, e.path, e.status) for e in entries)
        return {
            "counts": [
                {"method": method, "path": path, "status": status, "count": n}
                for (method, path, status), n in counts.items()
            ],
            "requests": [
                {"method": e.method, "path": e.path, "status": e.status}
                | ({"body": _json_or_text(e.body)} if e.body else {})
                for e in entries
            ],
            "total": len(entries),
        }
