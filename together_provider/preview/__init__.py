"""Pull-request previews: `pulumi preview --json` in, a Markdown comment with GPU and cost deltas
out, and an exit code (`Outcome`) so that CI can gate a PR on what it does to the clusters."""

from together_provider.preview.markdown import render
from together_provider.preview.plan import BAD_INPUT_EXIT, Outcome, StackPlan, build_plan
from together_provider.preview.verdict import Verdict
from together_provider.preview_parts.prices import (
    DEFAULT_PRICES_FILE,
    PreviewInputError,
    PriceTable,
    load_price_table,
)
from together_provider.preview_parts.steps import Action

__all__ = [
    "BAD_INPUT_EXIT",
    "DEFAULT_PRICES_FILE",
    "Action",
    "Outcome",
    "PreviewInputError",
    "PriceTable",
    "StackPlan",
    "Verdict",
    "build_plan",
    "load_price_table",
    "render",
]
