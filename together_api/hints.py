"""The caller's words in the fixes of the API layer's errors (the client's and the kubeconfig
decoder's): where its user sets the key and the base URL, and what a 404 means to it.

The API layer has no user of its own: a Pulumi stack sets the key as `together:apiKey`, the
autoscaler as `TOGETHER_API_KEY`, and only a stack can `pulumi refresh` a deleted cluster away.
So the wording is the caller's (`TogetherClient(hints=...)`), and the default names no caller.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FixHints"]


@dataclass(frozen=True)
class FixHints:
    """What the fix of an API error names: ``api_key`` how to give the key, ``base_url`` where
    the base URL is set, ``not_found`` the whole fix of a 404."""

    api_key: str = "pass api_key or set TOGETHER_API_KEY"
    base_url: str = "base_url or TOGETHER_BASE_URL"
    not_found: str = "check the id, and that the base URL is Together's API"
