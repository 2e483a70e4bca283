"""The drill's section of a stack's PR comment: the verdict of `python -m together_drill --json`
on the Job a PR changed, each problem's sentence and fix, a link to the whole report; short by
construction (`DRILL_SECTION_LIMIT`). Pure but for `read_drill_report`."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from together_provider.preview_parts.prices import PreviewInputError

DRILL_SECTION_LIMIT: Final = 8_000
"""The most characters the section takes (the poster's marker line aside): the comment keeps
room for it when it trims the preview."""
SHOWN_PROBLEMS: Final = 4
"""Problems listed; the rest are counted and left to the full report."""
TEXT_CUT: Final = 500
"""A sentence or fix longer than this is cut (the full report has it whole)."""
NAME_CUT: Final = 64
"""A Job's, pod's or problem code's name longer than this is cut (Kubernetes names have 63)."""
URL_LIMIT: Final = 300
"""A report link longer than this is left out (cut, it would lead nowhere)."""
FLAG: Final = "--drill"
FIX: Final = (
    "give the file `python -m together_drill ... --json REPORT.json` wrote (it writes one for "
    "every outcome, could-not-drill included)"
)

_VERDICTS: Final = {
    "safe": (":white_check_mark:", "safe", "the workload kept the drain-window contract"),
    "unsafe": (":x:", "unsafe", "a reclaim would lose work"),
    "unverified": (
        ":grey_question:",
        "unverified",
        "no problem seen, but the drill could not see a save after SIGTERM",
    ),
    "not_drilled": (":heavy_minus_sign:", "could not drill", "no verdict on the workload"),
}


@dataclass(frozen=True)
class DrillProblem:
    code: str
    pod: str | None
    sentence: str
    fix: str


@dataclass(frozen=True)
class DrillReport:
    """What the section shows of a drill's JSON report (docs/drill.md, "Exit codes")."""

    verdict: str
    """``safe``, ``unsafe``, ``unverified`` or ``not_drilled`` (exit 0, 1, 3, 2)."""
    job: str | None
    problems: tuple[DrillProblem, ...] = ()
    unverified: tuple[str, ...] = ()
    reason: str | None = None
    """Why it could not drill (``not_drilled`` only)."""
    reclaims: int = 0


def _problem(raw: Any, where: str, number: int) -> DrillProblem:
    if not isinstance(raw, Mapping) or not isinstance(raw.get("code"), str):
        raise PreviewInputError(where, f"problems[{number}] has no code", fix=FIX)
    sentence, fix = raw.get("sentence"), raw.get("fix")
    if not isinstance(sentence, str) or not isinstance(fix, str):
        # A report of a drill from before `sentence` and `fix`: its message holds both.
        message = str(raw.get("message") or "")
        sentence, _, fix = message.partition(" (fix: ")
        fix = fix.removesuffix(")")
    if not sentence:
        raise PreviewInputError(where, f"problems[{number}] has no sentence", fix=FIX)
    pod = raw.get("pod")
    return DrillProblem(raw["code"], pod if isinstance(pod, str) else None, sentence, fix)


def drill_report(raw: Any, where: str) -> DrillReport:
    """The report's fields the section shows, checked; a file that is not a drill's JSON report
    is a `PreviewInputError` naming `--drill`, the file and the fix."""
    verdict = raw.get("verdict") if isinstance(raw, Mapping) else None
    if not isinstance(raw, Mapping) or verdict not in _VERDICTS:
        raise PreviewInputError(
            where,
            f"not a drill report: its verdict is {verdict!r}, not one of "
            f"{', '.join(sorted(_VERDICTS))}",
            fix=FIX,
        )
    problems = raw.get("problems")
    problems = [] if problems is None else problems  # a not-drilled report has none
    if not isinstance(problems, list):
        raise PreviewInputError(where, "problems is not a list", fix=FIX)
    job = raw.get("job")
    name = job.get("name") if isinstance(job, Mapping) else None
    reclaims = raw.get("reclaims")
    return DrillReport(
        verdict=str(verdict),
        job=name if isinstance(name, str) else None,
        problems=tuple(_problem(p, where, n) for n, p in enumerate(problems)),
        unverified=tuple(str(s) for s in raw.get("unverified") or ()),
        reason=str(raw["reason"]) if raw.get("reason") else None,
        reclaims=len(reclaims) if isinstance(reclaims, list) else 0,
    )


def read_drill_report(path: Path) -> DrillReport:
    """`--drill FILE`, read and checked (exit 2 with the flag, the file and the fix otherwise)."""
    where = f"{FLAG} {path}"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise PreviewInputError(where, f"cannot read: {error.strerror}", fix=FIX) from None
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as error:
        raise PreviewInputError(
            where, f"not JSON ({error.msg} at line {error.lineno} column {error.colno})", fix=FIX
        ) from None
    return drill_report(raw, where)


def _cut(text: str, limit: int = TEXT_CUT) -> str:
    text = " ".join(text.split())  # one line: a list item must not break the Markdown
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _listed(items: Sequence[str], what: str) -> list[str]:
    lines = list(items[:SHOWN_PROBLEMS])
    if len(items) > SHOWN_PROBLEMS:
        lines.append(f"- … and {len(items) - SHOWN_PROBLEMS} more {what} in the full report")
    return lines


def render_drill(report: DrillReport, report_url: str | None = None) -> str:
    """The section: a headline with the verdict, one item per problem (its
    code, pod, sentence and fix), the unverified sentences or the reason it could not drill, and
    the link to the full report. At most `DRILL_SECTION_LIMIT` characters."""
    icon, word, meaning = _VERDICTS[report.verdict]
    job = f"Job `{_cut(report.job, NAME_CUT)}`" if report.job else "the Job"
    lines = [f"### Reclaim drill of {job}: {icon} **{word}**", ""]
    reclaimed = f" ({report.reclaims} reclaim(s))" if report.reclaims else ""
    lines.append(f"{meaning[0].upper()}{meaning[1:]}{reclaimed}.")
    if report.reason:
        lines += ["", f"> {_cut(report.reason)}"]
    problems = [
        f"- **`{_cut(p.code, NAME_CUT)}`**{f' (`{_cut(p.pod, NAME_CUT)}`)' if p.pod else ''}: "
        f"{_cut(p.sentence).rstrip('.')}." + (f"<br>**Fix:** {_cut(p.fix)}" if p.fix else "")
        for p in report.problems
    ]
    unseen = [f"- {_cut(sentence)}" for sentence in report.unverified]
    if problems:
        lines += ["", *_listed(problems, "problem(s)")]
    if unseen:
        lines += ["", *_listed(unseen, "pod(s) whose save was not seen")]
    linked = report_url is not None and 0 < len(report_url) <= URL_LIMIT
    link = f"[the full report]({report_url})" if linked else "the drill job's log"
    lines += ["", f"<sub>Every pod, reclaim and figure: {link}.</sub>", ""]
    text = "\n".join(lines)
    assert len(text) <= DRILL_SECTION_LIMIT, "every part above is bounded"
    return text
