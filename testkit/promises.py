"""What a page promises the user will see (its ``#>`` lines), checked against what the commands
printed: docs/walkthrough.md and docs/burst.md, by tests/integration/test_demo.py."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Final

__all__ = ["END", "KINDS", "PROMPT", "Promise", "bash_block", "broken", "marked", "promises"]

KINDS: Final = {"real nodes": "real", "KWOK nodes": "kwok"}
"""A promise's tag as the page writes it, and the node kind it names."""
PROMPT: Final = "#>"
END: Final = "#@ "
"""A screen line `marked` has the shell print after a command's promises: `#@ <page>:<line>`,
naming the last of them. The output before it is that command's, and the next one's after it."""
_TAG = re.compile(r"\s{2,}\[(" + "|".join(KINDS) + r")\]$")


@dataclass(frozen=True)
class Promise:
    """One line a page promises: where it is written, what it says, and for which node kind
    (None: both)."""

    where: str
    text: str
    kind: str | None = None
    ends: str | None = None
    """The `where` of the last promise of its run of `#>` lines: the screen's `END` line that
    closes the output of the command the run is under (None: a screen without them)."""

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
    runs: list[list[Promise]] = []  # the promises under each command, in the page's order
    under_command = False  # a command came since the last promise: the next one starts a run
    for number, line, quoted in _shell_lines(block, first_line):
        stripped = line.lstrip()
        if quoted or not stripped.startswith(PROMPT):
            under_command = under_command or (not quoted and _is_command(line))
            continue
        if under_command or not runs:
            runs.append([])
            under_command = False
        text = stripped[len(PROMPT) :]
        kind = None
        tag = _TAG.search(text)
        if tag:
            kind, text = KINDS[tag[1]], text[: tag.start()]
        runs[-1].append(Promise(f"{label}:{number}", text.strip(), kind))
    return [replace(promise, ends=run[-1].where) for run in runs for promise in run]


_HEREDOC = re.compile(r"<<-?\s*(['\"]?)(\w+)\1")


def _shell_lines(block: str, first_line: int) -> Iterator[tuple[int, str, bool]]:
    """Each line of a block with its page line number, and whether it is a here-document's text
    (or its closing word): the page's words there are data, neither promise nor command."""
    heredoc_end: str | None = None
    for number, line in enumerate(block.splitlines(), first_line):
        if heredoc_end is not None:
            yield number, line, True
            heredoc_end = None if line.strip() == heredoc_end else heredoc_end
            continue
        yield number, line, False
        opened = _HEREDOC.search(line) if _is_command(line) else None
        heredoc_end = opened[2] if opened else None


def _is_command(line: str) -> bool:
    """Whether a block's line is shell to run: a comment or a blank line between a command's
    promises keeps them one run."""
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith("#")


def marked(block: str, first_line: int, label: str) -> str:
    """The block with, after the last ``#>`` line of each command's run of promises, a command
    that prints `END` and that line (``$?`` kept for the next command): on the screen, each
    command's output is then bounded, so a promise is looked for in its own command's output,
    never in a later one's (where a broken step's promise could be met by chance, and every
    promise after it be reported broken). The runs are `promises`' own, so never in a
    here-document."""
    ends = {promise.ends for promise in promises(block, first_line, label)}
    out: list[str] = []
    for number, line in enumerate(block.splitlines(), first_line):
        out.append(line)
        if f"{label}:{number}" in ends:
            out.append(f"__rc=$?; echo '{END}{label}:{number}'; (exit $__rc)")
    return "\n".join(out) + "\n"


def broken(expected: list[Promise], screen: str, kind: str) -> list[str]:
    """What the screen does not show of `expected` (those for `kind`, in order), each as the
    page's line beside the screen's closest line after the last kept promise; empty: all kept.

    Each promise must match one line of the screen, whole (runs of blanks count as one blank),
    and in the page's order: a promise is looked for after the line the one before it matched,
    so a count promised for the refresh is not met by the same count printed by an earlier up."""
    lines = screen.splitlines()
    ends = {line[len(END) :].strip(): n for n, line in enumerate(lines) if line.startswith(END)}
    at = 0  # the screen line after the last promise kept
    found = []
    command: str | None = None  # the END line of the command whose promises are being looked for
    begun = 0  # the screen line where that command's output begins
    for promise in expected:
        if promise.ends != command:
            if command in ends:
                at = max(at, ends[command] + 1)  # the next command's output begins after its END
            command, begun = promise.ends, at
        if promise.kind not in (None, kind):
            continue
        # A promise is looked for in its command's output only: up to its run's END line.
        end = ends.get(promise.ends or "", len(lines))
        hit = next((n for n in range(at, end) if promise.matches(lines[n])), None)
        if hit is not None:
            at = hit + 1
        else:
            found.append(_side_by_side(promise, lines, at, end) + _printed(lines, begun, end))
    return found


def _printed(lines: list[str], begun: int, end: int, most: int = 20) -> str:
    """What the promise's command printed (its last `most` lines), when the screen bounds it."""
    if end == len(lines):
        return ""
    shown = [line for line in lines[begun:end] if line.strip()][-most:]
    return "\n  its command printed:" + "".join(f"\n    | {line}" for line in shown)


def _side_by_side(promise: Promise, lines: list[str], at: int, end: int) -> str:
    """The page's line and the screen's most alike line from `at` to `end` (by difflib's ratio)."""
    want = _squeeze(promise.text)
    best, score = None, -1.0
    for number in range(at, end):
        ratio = difflib.SequenceMatcher(None, want, _squeeze(lines[number])).ratio()
        if ratio > score:
            best, score = number, ratio
    screen = "(nothing in its command's output after the last promise kept)"
    if best is not None:
        screen = f"{_squeeze(lines[best])}   (screen line {best + 1}, the closest)"
    return f"{promise.where}\n  page:   {want}\n  screen: {screen}"
