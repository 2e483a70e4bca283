"""Together AI GPU clusters as code: a Pulumi dynamic provider with a preemptible target. This is
the public API (each kind's classes and every `together_facts.errors` error), cheap to import:
the Pulumi-backed classes load on first use. Layout: CONTRIBUTING.md "Where things live"."""

from __future__ import annotations

from typing import TYPE_CHECKING

from together_facts import errors as _errors
from together_facts.errors import *  # noqa: F403 (the error tree is re-exported whole, never copied)
from together_provider import registry as _registry

# Type checkers read the generated classes; at run time they load on first use (PEP 562), and
# hiding `__getattr__` from the checker keeps a misspelled name an error.
if TYPE_CHECKING:
    from together_provider.resources import *  # noqa: F403
else:
    __getattr__ = _registry.lazy_classes(__name__)

__all__ = sorted([*_errors.__all__, *_registry.EXPORTS])
