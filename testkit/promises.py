"""What a page promises the user will see (its ``#>`` lines), checked against what the commands
printed: docs/walkthrough.md and docs/burst.md, by tests/integration/test_demo.py."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Final

__all__ = ["KINDS", "PROMPT", "Promise", "bash_block", "broken", "promises"]

KINDS: Final = {"real nodes": "real", "KWOK nodes": "kwok"}
"""A promise's tag as the page writes it, and the node kind it names."""
PROMPT: Final = "#>"
_TAG = re.compile(r"\s{2,}\[(" + "|".join(KINDS) + r")\]$")


@dataclass(frozen=True)
class Promise:
    """One line a page promises: where it is written, what it says, and for which node kind
    (None: both)."""

    where: str
    text: str
    kind: str | None = None

    def pattern(self) -> re.Pattern[str]:
        parts = (re.escape(_squeeze(part)) for part in self.text.split("..."))
        return re.compile(".*".join(parts))

    def matches(self, line: str) -> bool:
        return self.pattern().fullmatch(_squeeze(line)) is not None


def _squeeze(text: str) -> str:
    return " ".join(text.split())


def bash_block(page: Path, marker: str) -> tuple[str, int]:
    """The bash block after ``<!-- walkthrough:<marker> -->`` in `page`, as written, and the
    page's line number of its first line."""
    text = page.read_text()
    start = text.index("```bash\n", text.index(f"<!-- walkthrough:{marker} -->")) + 8
    return text[start : text.index("```", start)], text.count("\n", 0, start) + 1


def promises(block: str, first_line: int, label: str) -> list[Promise]:
    """The ``#>`` lines of a block that starts at line `first_line` of the page `label`. A page
    shows a command's output under it, as doctest does::

        pulumi refresh --yes
        #>     13 unchanged     [real nodes]
        #>     3 unchanged      [KWOK nodes]

    ``...`` stands for whatever differs from run to run (an id, a time); a trailing
    ``[real nodes]`` or ``[KWOK nodes]`` says that only that node kind prints the line."""
    found = []
    for number, line in enumerate(block.splitlines(), first_line):
        stripped = line.lstrip()
        if not stripped.startswith(PROMPT):
            continue
        text = stripped[len(PROMPT) :]
        kind = None
        tag = _TAG.search(text)
        if tag:
            kind, text = KINDS[tag[1]], text[: tag.start()]
        found.append(Promise(f"{label}:{number}", text.strip(), kind))
    return found


def broken(expected: list[Promise], screen: str, kind: str) -> list[str]:
    """What the screen does not show of `expected` (those for `kind`, in order), each as the
    page's line beside the screen's closest line after the last kept promise; empty: all kept.

    Each promise must match one line of the screen, whole (runs of blanks count as one blank),
    and in the page's order: a promise is looked for after the line the one before it matched,
    so a count promised for the refresh is not met by the same count printed by an earlier up."""
    lines = screen.splitlines()
    at = 0  # the screen line after the last promise kept
    found = []
    for promise in expected:
        if promise.kind not in (None, kind):
            continue
        hit = next((n for n in range(at, len(lines)) if promise.matches(lines[n])), None)
        if hit is not None:
            at = hit + 1
            continue
        found.append(_side_by_side(promise, lines, at))
    return found


def _side_by_side(promise: Promise, lines: list[str], at: int) -> str:
    """The page's line and the screen's most alike line from `at` on (by difflib's ratio)."""
    want = _squeeze(promise.text)
    best, score = None, -1.0
    for number in range(at, len(lines)):
        ratio = difflib.SequenceMatcher(None, want, _squeeze(lines[number])).ratio()
        if ratio > score:
            best, score = number, ratio
    screen = "(nothing after the last promise kept)"
    if best is not None:
        screen = f"{_squeeze(lines[best])}   (screen line {best + 1}, the closest)"
    return f"{promise.where}\n  page:   {want}\n  screen: {screen}"
