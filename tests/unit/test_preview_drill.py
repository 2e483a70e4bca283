"""The drill's section of a stack's PR comment (`together_provider.preview.drill`), rendered from
the drill's own JSON report (`together_drill.report.as_json`), and how the comment keeps it:
`gitops.post.merged` and `--drill` on the CLI and the poster."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from testkit.github_server import GitHubServer
from tests.unit.test_gitops_poster import PR, REPO, TOKEN, _preview
from together_drill.report import as_json, not_drilled_json
from together_drill.verdict import FIXES, Code, JobSeen, PodSeen, ReclaimSeen, Save, verdict
from together_provider.gitops.post import (
    DRILL_MARKER,
    MARKER,
    merged,
    split_drill,
    with_drill,
    with_marker,
)
from together_provider.preview.__main__ import main
from together_provider.preview.drill import (
    DRILL_SECTION_LIMIT,
    DrillReport,
    drill_report,
    read_drill_report,
    render_drill,
)
from together_provider.preview_parts.prices import PreviewInputError

WINDOW = 300.0
DONE = JobSeen("sweep", completions=1, succeeded=1)
SAVED = PodSeen(
    pod="sweep-0-good",
    node="n",
    index="0",
    grace_seconds=6,
    sigterm_delivered=True,
    exit_code=143,
    sigterm_to_exit_seconds=0.4,
    counted_success=False,
    save=Save.COMPLETED,
    save_source="status.json",
)
# The same pod killed at the grace's end (it ignored SIGTERM), and exiting 143 with no save seen.
IGNORES = replace(
    SAVED, pod="sweep-0-deaf", exit_code=137, sigterm_to_exit_seconds=6.2, save=Save.UNSEEN,
    save_source=None,
)  # fmt: skip
UNSEEN = replace(
    SAVED, pod="sweep-0-mute", sigterm_to_exit_seconds=0.5, save=Save.UNSEEN, save_source=None
)


def _report(*pods: PodSeen, job: JobSeen = DONE) -> dict[str, Any]:
    """What `python -m together_drill --json` writes for a drill that saw these pods."""
    reclaims = [ReclaimSeen("gpu-preemptible-1", 12.0, pods, 30.0)]
    result = verdict(reclaims, job, WINDOW)
    document = as_json(result, reclaims, job, {"manifest": "rendered"}, WINDOW)
    loaded: dict[str, Any] = json.loads(json.dumps(document))
    return loaded


IGNORED_SENTENCE = (
    "sweep-0-deaf was killed by force after 6.2 s at the end of its 6 s grace period (it had "
    "not exited after SIGTERM), so nothing after its last checkpoint was saved"
)


@pytest.mark.parametrize(
    ("report", "has", "has_not"),
    [
        (
            _report(SAVED),
            [
                "### Reclaim drill of Job `sweep`: :white_check_mark: **safe**",
                "The workload kept the drain-window contract (1 reclaim(s)).",
            ],
            ["**Fix:**", "**`"],
        ),
        (
            _report(IGNORES),
            [
                "### Reclaim drill of Job `sweep`: :x: **unsafe**",
                f"- **`SIGTERM_IGNORED`** (`sweep-0-deaf`): {IGNORED_SENTENCE}.<br>**Fix:** "
                + FIXES[Code.SIGTERM_IGNORED],
            ],
            ["(fix:"],  # the sentence and its fix apart, not the report's one-line message
        ),
        (
            _report(UNSEEN),
            [
                ":grey_question: **unverified**",
                "- the drill could not see sweep-0-mute save after SIGTERM",
            ],
            ["**Fix:**"],
        ),
        (
            not_drilled_json("image(s) acme/train:2 not on the drill's nodes"),
            [
                "### Reclaim drill of the Job: :heavy_minus_sign: **could not drill**",
                "> image(s) acme/train:2 not on the drill's nodes",
            ],
            ["**`"],
        ),
        (  # a report written before `sentence` and `fix`: split from its message
            {
                "verdict": "unsafe",
                "job": {"name": "old"},
                "problems": [
                    {"code": "NOT_RESUMED", "pod": "p", "message": "it restarted (fix: load)"}
                ],
            },
            ["- **`NOT_RESUMED`** (`p`): it restarted.<br>**Fix:** load"],
            [],
        ),
    ],
    ids=["safe", "unsafe", "unverified", "not-drilled", "old-report"],
)
def test_the_section_shows_the_verdict_and_each_problems_sentence_and_fix(
    report: dict[str, Any], has: list[str], has_not: list[str]
) -> None:
    section = render_drill(drill_report(report, "r.json"), "https://example.test/artifacts/7")
    assert section.startswith("### Reclaim drill of ") and DRILL_MARKER not in section
    for text in has:
        assert text in section
    for text in has_not:
        assert text not in section
    assert "[the full report](https://example.test/artifacts/7)" in section


def test_without_a_url_the_section_points_at_the_log() -> None:
    assert "the drill job's log" in render_drill(drill_report(_report(SAVED), "r.json"))


def test_a_report_with_many_long_problems_stays_short() -> None:
    """Every field a report gives is bounded, the Job's, pods' and codes' names and the link
    too, so the section fits the room the preview leaves it whatever the report holds."""
    long = {"code": "C" * 5_000, "pod": "p" * 5_000, "sentence": "x" * 5_000, "fix": "y" * 5_000}
    report = {
        "verdict": "unverified",
        "job": {"name": "j" * 5_000},
        "reason": "z" * 5_000,
        "problems": [long] * 50,
        "unverified": ["w" * 5_000] * 50,
    }
    section = render_drill(drill_report(report, "r.json"), "https://example.test/" + "u" * 200)
    assert len(section) <= DRILL_SECTION_LIMIT
    assert "[the full report](https://example.test/uuu" in section
    too_long = render_drill(drill_report(report, "r.json"), "https://example.test/" + "u" * 9_000)
    assert len(too_long) <= DRILL_SECTION_LIMIT and "the drill job's log" in too_long
    assert "- … and 46 more problem(s) in the full report" in section
    assert "- … and 46 more pod(s) whose save was not seen in the full report" in section


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "--drill {path}: cannot read: No such file or directory"),
        ("{not json", "--drill {path}: not JSON (Expecting property name"),
        ('{"verdict": "ok"}', "--drill {path}: not a drill report: its verdict is 'ok'"),
        ("[1]", "not a drill report: its verdict is None"),
        ('{"verdict": "unsafe", "problems": [{"pod": "p"}]}', "problems[0] has no code"),
        ('{"verdict": "unsafe", "problems": [{"code": "X"}]}', "problems[0] has no sentence"),
        ('{"verdict": "unsafe", "problems": {}}', "problems is not a list"),
    ],
)
def test_a_missing_or_invalid_report_names_the_flag_and_the_fix(
    tmp_path: Path, content: str | None, message: str
) -> None:
    path = tmp_path / "report.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(PreviewInputError) as raised:
        read_drill_report(path)
    assert message.format(path=path) in str(raised.value)
    assert "python -m together_drill ... --json REPORT.json" in str(raised.value)


DRILL = render_drill(DrillReport("unsafe", "sweep"))
OLDER = render_drill(DrillReport("safe", "sweep"))
PREVIEW = with_marker("dev", "## `dev` (:arrows_counterclockwise: changes)\n| row |")
NEWER = with_marker("dev", "## `dev` (:white_check_mark: no changes)")
ALONE = with_drill(with_marker("dev", ""), DRILL)


@pytest.mark.parametrize(
    ("old", "new", "after"),
    [
        (PREVIEW, NEWER, NEWER),  # no drill anywhere: the new preview
        (with_drill(PREVIEW, OLDER), NEWER, with_drill(NEWER, OLDER)),  # the verdict is kept
        (with_drill(PREVIEW, OLDER), ALONE, with_drill(PREVIEW, DRILL)),  # the preview is kept
        (PREVIEW, ALONE, with_drill(PREVIEW, DRILL)),
        (with_drill(PREVIEW, OLDER), with_drill(NEWER, DRILL), with_drill(NEWER, DRILL)),
    ],
    ids=["preview-only", "preview-over-both", "drill-over-both", "drill-added", "both-new"],
)
def test_each_post_replaces_only_the_parts_it_carries(old: str, new: str, after: str) -> None:
    assert merged(old, new) == after
    assert split_drill(after)[0].startswith(MARKER.format(stack="dev"))


@pytest.fixture
def github() -> Iterator[GitHubServer]:
    with GitHubServer(token=TOKEN, repos=[REPO]) as server:
        server.seed_pull_request(REPO, PR)
        yield server


def _run(*argv: str | Path, github: GitHubServer | None = None) -> int:
    env = {} if github is None else {"GITHUB_API_URL": github.url, "GITHUB_REPOSITORY": REPO}
    return main([str(a) for a in argv], environ={**env, "GITHUB_TOKEN": TOKEN})


def test_the_cli_appends_the_section_to_its_stacks_comment(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "drill.json"
    report.write_text(json.dumps(_report(IGNORES)))
    dev = _preview(tmp_path, "dev", {"train": (8, 16)})
    assert _run("--stack", f"dev={dev}", "--drill", report, "--drill-url", "https://x/1") == 10
    out = capsys.readouterr().out
    head, drill = split_drill(out.rstrip("\n") + "\n")
    assert head.startswith(MARKER.format(stack="dev")) and "`train`" in head
    assert drill is not None and IGNORED_SENTENCE in drill and "https://x/1" in drill


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("--drill-url", "https://x"), "error: --drill-url: goes with --drill FILE"),
        (("--drill", "{report}"), "error: --drill: which stack's comment gets the drill's verdict"),
        (
            ("--stack", "dev={dev}", "--drill", "{report}", "--drill-stack", "prod"),
            "error: --drill-stack: 'prod' is not a stack previewed here (dev)",
        ),
    ],
    ids=["url-alone", "no-stack", "unknown-stack"],
)
def test_bad_drill_flags_name_the_flag_and_the_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], message: str
) -> None:
    report = tmp_path / "drill.json"
    report.write_text(json.dumps(_report(SAVED)))
    dev = _preview(tmp_path, "dev", {"train": (8, 16)})
    given = [a.format(report=report, dev=dev) for a in argv]
    if "--stack" not in given and "--drill" not in given:
        given = ["--stack", f"dev={dev}", *given]
    assert _run(*given) == 2
    assert message in capsys.readouterr().err


def test_the_drill_and_the_preview_share_one_comment_edited_in_place(
    github: GitHubServer, tmp_path: Path
) -> None:
    """The drill workflow posts its section alone; the preview workflow posts the preview: in
    either order, one comment per stack holds both, edited in place."""
    report = tmp_path / "drill.json"
    report.write_text(json.dumps(_report(IGNORES)))
    drill = ("--drill", report, "--drill-stack", "dev", "--github-pr", str(PR))
    assert _run(*drill, github=github) == 0
    (created,) = github.comments(REPO, PR)
    assert created["body"].startswith(MARKER.format(stack="dev"))
    assert IGNORED_SENTENCE in created["body"]
    dev = _preview(tmp_path, "dev", {"train": (8, 16)})
    assert _run("--stack", f"dev={dev}", "--github-pr", str(PR), github=github) == 10
    (both,) = github.comments(REPO, PR)
    assert both["id"] == created["id"]
    assert "`train`" in both["body"] and IGNORED_SENTENCE in both["body"]
    report.write_text(json.dumps(_report(SAVED)))
    assert _run(*drill, github=github) == 0
    (after,) = github.comments(REPO, PR)
    assert after["id"] == created["id"] and "`train`" in after["body"]
    assert ":white_check_mark: **safe**" in after["body"] and IGNORED_SENTENCE not in after["body"]


def test_the_section_reads_exactly_as_a_reviewer_sees_it() -> None:
    """Every line of one section: the headline, the meaning (no reclaim count when none was
    made), the reason, a problem with its pod and fix, one without either (no empty "Fix"), the
    pods whose save was not seen, the pointer to the log, each block set apart by one blank line."""
    from together_provider.preview.drill import DrillProblem

    report = DrillReport(
        verdict="unsafe",
        job=None,
        problems=(
            DrillProblem("SIGTERM_IGNORED", "p-0", "The pod ignored SIGTERM in BOX...", "trap it"),
            DrillProblem("OTHER", None, "No fix is known", ""),
        ),
        unverified=("pod p-1: no save seen",),
        reason="the   world\nwas slow",
    )
    assert render_drill(report).split("\n") == [
        "### Reclaim drill of the Job: :x: **unsafe**",
        "",
        "A reclaim would lose work.",
        "",
        "> the world was slow",
        "",
        "- **`SIGTERM_IGNORED`** (`p-0`): The pod ignored SIGTERM in BOX.<br>**Fix:** trap it",
        "- **`OTHER`**: No fix is known.",
        "",
        "- pod p-1: no save seen",
        "",
        "<sub>Every pod, reclaim and figure: the drill job's log.</sub>",
        "",
    ]


def test_long_text_is_cut_at_its_bound_and_a_fifth_problem_is_counted() -> None:
    from together_provider.preview.drill import SHOWN_PROBLEMS, TEXT_CUT, DrillProblem

    def section(sentences: list[str]) -> list[str]:
        problems = tuple(DrillProblem(f"C{n}", None, s, "") for n, s in enumerate(sentences))
        return render_drill(DrillReport("unsafe", "j", problems)).split("\n")

    at_bound, over = "a" * (TEXT_CUT - 1) + "b", "a" * TEXT_CUT + "b"
    assert f"- **`C0`**: {at_bound}." in section([at_bound])
    assert f"- **`C0`**: {'a' * (TEXT_CUT - 1)}…." in section([over])
    exactly = section(["s"] * SHOWN_PROBLEMS)
    assert not any("more problem(s)" in line for line in exactly)
    one_more = section(["s"] * (SHOWN_PROBLEMS + 1))
    assert "- … and 1 more problem(s) in the full report" in one_more


def test_each_refusal_of_a_report_names_the_file_and_what_is_wrong() -> None:
    where = "--drill out/r.json"

    def refusal(raw: Any) -> str:
        with pytest.raises(PreviewInputError) as error:
            drill_report(raw, where)
        assert where in str(error.value), str(error.value)
        return str(error.value)

    assert "not one of not_drilled, safe, unsafe, unverified" in refusal({"verdict": "ok"})
    assert "problems is not a list" in refusal({"verdict": "unsafe", "problems": "x"})
    assert "problems[0] has no code" in refusal({"verdict": "unsafe", "problems": [{}]})
    no_sentence = {"verdict": "unsafe", "problems": [{"code": "C", "fix": "f"}]}
    assert "problems[0] has no sentence" in refusal(no_sentence)


def test_odd_fields_of_a_report_are_read_as_absent() -> None:
    """A report of an older drill (the sentence and fix only in `message`, a fix that ends in a
    parenthesis) and fields of the wrong type: nothing made up."""
    report = drill_report(
        {
            "verdict": "unsafe",
            "job": {"name": 5},
            "reclaims": "x",
            "problems": [
                {"code": "C", "pod": 7, "sentence": "half", "message": "S (fix: use f (now))"}
            ],
        },
        "--drill r.json",
    )
    assert (report.job, report.reclaims) == (None, 0)
    (problem,) = report.problems
    assert (problem.pod, problem.sentence, problem.fix) == (None, "S", "use f (now)")
