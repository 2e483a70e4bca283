"""The fixes a Pulumi user is given for the API layer's errors (the stack config that sets the
key and the base URL, the refresh that drops what was deleted outside the stack), so that the
API layer's own wording names no caller."""

from __future__ import annotations

from typing import Final

from together_facts.hints import FixHints

__all__ = ["PULUMI_FIXES"]

PULUMI_FIXES: Final = FixHints(
    api_key="set together:apiKey as a secret or TOGETHER_API_KEY",
    base_url="together:baseUrl or TOGETHER_BASE_URL",
    not_found="check the id, and that the base URL is Together's API; a cluster or volume "
    "deleted outside this stack is gone: `pulumi refresh` removes it from the state",
)
"""Both hosts (dynamic and native) hand these to every client they build, and the cluster's
outputs to the kubeconfig decoder."""
