"""The caller's words in the fixes of the API layer's errors. The layer has no user of its own, so
where the key and base URL are set (a stack's `together:apiKey`, the autoscaler's
`TOGETHER_API_KEY`) is the caller's wording (`TogetherClient(hints=...)`)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FixHints"]


@dataclass(frozen=True)
class FixHints:
    """What the fix of an API error names: ``api_key`` how to give the key, ``base_url`` where
    the base URL is set, ``not_found`` the whole fix of a 404 (only a stack can `pulumi refresh`
    a deleted cluster away). The defaults name no caller."""

    api_key: str = "pass api_key or set TOGETHER_API_KEY"
    base_url: str = "base_url or TOGETHER_BASE_URL"
    not_found: str = "check the id, and that the base URL is Together's API"
