"""How a kind's table cell shows a cost: money, signed money, and the placeholder mark. Free of
the registry, so each kind's `preview.py` builds on it."""

from __future__ import annotations

from together_provider.preview_parts.guardrails import PLACEHOLDER_MARK

__all__ = ["marked", "money", "signed_money"]


def money(value: float | None) -> str:
    return "?" if value is None else f"${value:,.2f}"


def marked(text: str, placeholder: bool) -> str:
    """A cost figure, followed by the placeholder mark when a placeholder rate priced it."""
    return f"{text}{PLACEHOLDER_MARK}" if placeholder and text != "?" else text


def signed_money(value: float | None) -> str:
    if value is None:
        return "?"
    if round(value, 2) == 0:
        return "±$0.00"
    return f"{'+' if value > 0 else '-'}${abs(value):,.2f}"
