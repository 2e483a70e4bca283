"""docs/troubleshooting.md quotes the code: a user who searches for a message finds its row, and
a row whose message the code no longer prints fails here.

The convention (stated on the page): in the table under "Messages from this project", every code
span of the first column is text our code prints. `...` leaves a part out; ` (fix: ` starts the
fix every error of ours ends with, so the message and the fix are looked up apart. Each piece
between those must occur in one string literal of our Python code (docstrings do not count),
where an f-string's `{field}` stands for one word (a name, a number, an id): `size_tib 4 -> 2`
quotes `size_tib {before} -> {after}`. Messages of Pulumi, the SDK and `tg` go in the other
table, which is not checked.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

from tests.source_literals import Literal, string_literals

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "troubleshooting.md"
OURS = "## Messages from this project"
CODE = (
    "together_api",
    "together_provider",
    "together_policy",
    "together_sim",
    "together_autoscaler",
    "together_drill",
    "testkit",
)
WORD = r"\S+"
CUT = re.compile(r"\.\.\.|…| ?\(fix: ")


@cache
def code_literals() -> frozenset[Literal]:
    return frozenset(
        literal
        for package in CODE
        for module in sorted((REPO / package).rglob("*.py"))
        for literal in string_literals(module, docstrings=False)
    )


def in_the_code(piece: str) -> bool:
    return any(occurs(piece, literal) for literal in code_literals())


@cache
def _fields_between(middle: Literal) -> re.Pattern[str]:
    """One word per field, with the texts between them as they are."""
    return re.compile(WORD + "".join(re.escape(text) + WORD for text in middle))


def _overlaps(piece: str, text: str, *, at_start: bool) -> list[int]:
    """The lengths k for which the piece's first k characters end `text` (or its last k
    characters begin it): how far a piece may reach into the literal text beside a field."""
    most = min(len(piece), len(text))
    if at_start:
        return [k for k in range(most + 1) if text.endswith(piece[:k])]
    return [k for k in range(most + 1) if text.startswith(piece[len(piece) - k :])]


def _enough(own: str) -> bool:
    """At least three letters or digits: a shorter text (a `:`, an `ok`) is in some literal of
    any code, so finding it there proves nothing."""
    return len(re.findall(r"\w", own)) >= 3


def occurs(piece: str, literal: Literal) -> bool:
    """Whether `piece` is part of what `literal` can print, each field being one word, with at
    least three letters or digits of the piece coming from the literal's own text."""
    if not _enough(piece):
        return False
    if any(piece in text for text in literal):
        return True
    for first in range(len(literal) - 1):
        for last in range(first + 1, len(literal)):
            middle = literal[first + 1 : last]
            if not all(text in piece for text in middle):
                continue
            for head in _overlaps(piece, literal[first], at_start=True):
                for tail in _overlaps(piece, literal[last], at_start=False):
                    inner = piece[head : len(piece) - tail]
                    own = piece[:head] + "".join(middle) + piece[len(piece) - tail :]
                    if (
                        head + tail <= len(piece)
                        and _enough(own)
                        and _fields_between(middle).fullmatch(inner)
                    ):
                        return True
    return False


def quoted_messages() -> list[str]:
    """Every code span in the first column of the table of our messages."""
    section = PAGE.read_text().split(OURS, 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ")][2:]  # no header
    return [span for row in rows for span in re.findall(r"`([^`]+)`", row.split(" | ")[0])]


def pieces(quote: str) -> list[str]:
    cut = [p.strip() for p in CUT.split(quote)]
    if "(fix: " in quote and cut[-1].endswith(")"):
        cut[-1] = cut[-1][:-1].rstrip()
    return [p for p in cut if re.search(r"\w", p)]


QUOTES = quoted_messages()


def test_the_convention_reads_what_it_should() -> None:
    assert len(QUOTES) >= 15
    assert pieces("failed with HTTP 409: ... (fix: try another region or GPU type)") == [
        "failed with HTTP 409:",
        "try another region or GPU type",
    ]
    size = ("size_tib ", " -> ", " would shrink the volume; Together volumes only grow ")
    assert occurs("size_tib 4 -> 2 would shrink the volume", size)
    assert not occurs("size_tib 4 -> 2 would grow the volume", size)
    assert not occurs("size_tib four TiB -> 2 would shrink the volume", size)  # one word a field
    assert not occurs("GET", ("", " ", ""))  # only fields: not a quote of the code
    assert not occurs("ok", ("ok, deleted",))  # too short to be a quote, even as it stands
    assert occurs("deleted", ("ok, deleted",))


@pytest.mark.parametrize("quote", QUOTES)
def test_each_quoted_message_is_in_the_code(quote: str) -> None:
    missing = [piece for piece in pieces(quote) if not in_the_code(piece)]
    assert not missing, f"docs/troubleshooting.md quotes {quote!r}; not in the code: {missing}"
