"""Pull-request previews: `pulumi preview --json` in, a Markdown comment with GPU and cost deltas.

Run it as `python -m together_provider.preview [--stack NAME=FILE ...] [FILE ...]`; the exit code
says what the PR does (see `Outcome` and `BAD_INPUT_EXIT`), so CI can gate on it. With
`--github-pr N` it posts one comment per stack itself (`to_github`, `post`, `github`), exiting
`GITHUB_ERROR_EXIT` when GitHub refuses.
"""

from together_provider.preview.markdown import MARKER, render
from together_provider.preview.plan import (
    BAD_INPUT_EXIT,
    GITHUB_ERROR_EXIT,
    Action,
    Outcome,
    StackPlan,
    build_plan,
)
from together_provider.preview.prices import (
    DEFAULT_PRICES_FILE,
    PreviewInputError,
    PriceTable,
    load_price_table,
)

__all__ = [
    "BAD_INPUT_EXIT",
    "DEFAULT_PRICES_FILE",
    "GITHUB_ERROR_EXIT",
    "MARKER",
    "Action",
    "Outcome",
    "PreviewInputError",
    "PriceTable",
    "StackPlan",
    "build_plan",
    "load_price_table",
    "render",
]
