"""The PR-comment poster (`--github-pr`: `gitops`, which cuts to GitHub's limit and marks each
stack's comment) and `drift-issue` against the GitHub contract server.

Real HTTP to `testkit.github_server`; the previews are small hand-written `pulumi preview
--json` documents (the renderer has its own tests, and tests/integration/test_preview_comment.py
posts real previews). GitHub's waits go to a recording `sleep`: no test sleeps.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from testkit.github_server import GitHubServer
from tests.fake_time import FakeTime
from together_provider.cluster.table import CLUSTER_TYPE
from together_provider.gitops.post import MARKER
from together_provider.preview import load_price_table
from together_provider.preview.__main__ import main
from together_provider.preview.drill import DRILL_SECTION_LIMIT

REPO, PR, TOKEN = "acme/gpu", 42, "ghs-secret-token-0123456789"
PROJECT = "together-gpu-clusters"
RATE = load_price_table().rates["H100_SXM"]


def _preview(
    tmp_path: Path,
    name: str,
    clusters: dict[str, tuple[int, int]],
    op: str = "update",
    config: dict[str, str] | None = None,
) -> Path:
    """A preview changing each cluster's preemptible target from ``old`` to ``new`` GPUs."""
    steps: list[dict[str, Any]] = [
        {"op": "same", "urn": f"urn:pulumi:{name}::{PROJECT}::pulumi:pulumi:Stack::p-{name}"}
    ]
    for cluster, (old, new) in clusters.items():
        spec = {"cluster_name": cluster, "gpu_type": "H100_SXM", "num_gpus": 8}
        urn = f"urn:pulumi:{name}::{PROJECT}::pulumi:pulumi:Stack${CLUSTER_TYPE}::{cluster}"
        steps.append(
            {
                "op": op if old != new else "same",
                "urn": urn,
                "oldState": {"inputs": {**spec, "num_preemptible_gpus": old}, "outputs": {}},
                "newState": {"inputs": {**spec, "num_preemptible_gpus": new}, "outputs": {}},
            }
        )
    config = {f"{PROJECT}:clusters": "{}", **(config or {})}
    document = {"config": config, "steps": steps, "changeSummary": {}}
    path = tmp_path / f"{name}-{len(clusters)}-{sum(n for _, n in clusters.values())}.json"
    path.write_text(json.dumps(document))
    return path


@pytest.fixture
def github() -> Iterator[GitHubServer]:
    with GitHubServer(token=TOKEN, repos=[REPO]) as server:
        server.seed_pull_request(REPO, PR)
        yield server


@pytest.fixture
def env(github: GitHubServer, tmp_path: Path) -> dict[str, str]:
    return {
        "GITHUB_API_URL": github.url,
        "GITHUB_REPOSITORY": REPO,
        "GITHUB_TOKEN": TOKEN,
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
    }


class Run:
    """One CLI run on a fake clock: its exit code, stderr and the waits it asked for."""

    def __init__(self, capsys: pytest.CaptureFixture[str], env: dict[str, str]) -> None:
        self.capsys, self.env = capsys, env
        self.time = FakeTime()

    @property
    def sleeps(self) -> list[float]:
        return self.time.sleeps

    def __call__(self, *argv: str | Path, env: dict[str, str] | None = None) -> tuple[int, str]:
        self.time = FakeTime()
        code = main(
            [str(a) for a in argv],
            environ=env or self.env,
            sleep=self.time.sleep,
            clock=self.time.clock,
        )
        out, err = self.capsys.readouterr()
        assert TOKEN not in out + err
        assert out == ""
        return code, err


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str], env: dict[str, str]) -> Run:
    return Run(capsys, env)


def _post(run: Run, *stacks: tuple[str, Path], extra: tuple[str, ...] = ()) -> tuple[int, str]:
    flags = [f for name, path in stacks for f in ("--stack", f"{name}={path}")]
    return run(*flags, "--github-pr", str(PR), *extra)


def _bodies(github: GitHubServer) -> list[str]:
    return [c["body"] for c in github.comments(REPO, PR)]


def test_one_comment_per_stack_then_edited_in_place(
    github: GitHubServer, run: Run, tmp_path: Path, env: dict[str, str]
) -> None:
    dev, prod = _preview(tmp_path, "dev", {"train": (8, 16)}), _preview(tmp_path, "prod", {})
    assert _post(run, ("dev", dev), ("prod", prod))[0] == 10
    first = github.comments(REPO, PR)
    assert [c["body"].splitlines()[0] for c in first] == [
        MARKER.format(stack="dev"),
        MARKER.format(stack="prod"),
    ]
    assert "8 → 16" in first[0]["body"]

    github.clear_requests()
    code, err = _post(run, ("dev", _preview(tmp_path, "dev", {"train": (8, 24)})), ("prod", prod))
    again = github.comments(REPO, PR)
    assert code == 10
    assert [c["id"] for c in again] == [c["id"] for c in first]
    assert "8 → 24" in again[0]["body"] and "8 → 16" not in again[0]["body"]
    assert "dev: edited comment https://github.com/acme/gpu/pull/42#issuecomment-" in err
    assert "prod: comment unchanged https://github.com/acme/gpu/pull/42#issuecomment-" in err
    calls = [(r["method"], r["path"].rsplit("/", 2)[-2:]) for r in github.requests()]
    assert calls.count(("GET", [str(PR), "comments"])) == 1  # listed once for both stacks
    assert [c for c in calls if c[0] == "PATCH"] == [("PATCH", ["comments", str(first[0]["id"])])]
    summary = Path(env["GITHUB_STEP_SUMMARY"]).read_text()
    assert summary.count(MARKER.format(stack="dev")) == 2  # appended on each run


def test_the_marker_is_found_on_a_later_page_and_duplicates_go(
    github: GitHubServer, run: Run, tmp_path: Path
) -> None:
    github.seed_comments(REPO, PR, [f"chatter {i}" for i in range(130)])
    (old,) = github.seed_comments(REPO, PR, [MARKER.format(stack="dev") + "\nold figures"])
    github.seed_comments(REPO, PR, [f"more {i}" for i in range(80)])
    github.seed_comments(REPO, PR, [MARKER.format(stack="dev") + "\na duplicate"])
    github.clear_requests()
    assert _post(run, ("dev", _preview(tmp_path, "dev", {"train": (8, 16)})))[0] == 10
    mine = [c for c in github.comments(REPO, PR) if c["body"].startswith("<!--")]
    assert [c["id"] for c in mine] == [old]
    assert "8 → 16" in mine[0]["body"]
    listed = [r["query"] for r in github.requests() if r["path"].endswith(f"/{PR}/comments")]
    assert listed == ["per_page=100", "per_page=100&page=2", "per_page=100&page=3"]
    assert len(github.comments(REPO, PR)) == 211


def test_new_and_delete_and_new(github: GitHubServer, run: Run, tmp_path: Path) -> None:
    dev = _preview(tmp_path, "dev", {"train": (8, 16)})
    _post(run, ("dev", dev))
    github.clear_requests()
    _post(run, ("dev", dev), extra=("--comment-behavior", "new"))
    two = github.comments(REPO, PR)
    assert len(two) == 2
    assert [r["method"] for r in github.requests()] == ["POST"]  # no listing: nothing to find
    _post(run, ("dev", dev), extra=("--comment-behavior", "delete-and-new"))
    (last,) = github.comments(REPO, PR)
    assert last["id"] > max(c["id"] for c in two)


def test_skip_no_diff_posts_nothing_new_but_refreshes_an_old_comment(
    github: GitHubServer, run: Run, tmp_path: Path
) -> None:
    same = _preview(tmp_path, "dev", {"train": (8, 8)})
    code, err = _post(run, ("dev", same), extra=("--skip-no-diff",))
    assert (code, github.comments(REPO, PR)) == (0, [])
    assert "dev: no changes, no comment (--skip-no-diff)" in err
    _post(run, ("dev", _preview(tmp_path, "dev", {"train": (8, 16)})), extra=("--skip-no-diff",))
    _post(run, ("dev", same), extra=("--skip-no-diff",))
    (comment,) = github.comments(REPO, PR)
    assert ":white_check_mark: no changes" in comment["body"]  # no stale figures left
    _post(run, ("dev", same), extra=("--skip-no-diff", "--comment-behavior", "delete-and-new"))
    assert github.comments(REPO, PR) == []


def test_an_oversized_comment_is_trimmed_and_keeps_its_summary(
    github: GitHubServer, run: Run, tmp_path: Path, env: dict[str, str]
) -> None:
    clusters = {f"train-{i:04d}-{'x' * 40}": (8, 16) for i in range(600)}
    assert _post(run, ("dev", _preview(tmp_path, "dev", clusters)))[0] == 10
    (comment,) = github.comments(REPO, PR)
    body = comment["body"]
    rows = [line for line in body.splitlines() if line.startswith("| `train-")]
    # Trimmed to leave room for the drill's section (at most DRILL_SECTION_LIMIT characters).
    assert 55_000 < len(body) <= 65_536 - DRILL_SECTION_LIMIT
    assert 0 < len(rows) < 600
    assert f"{len(rows)} of 600 clusters" in body
    assert f"Δ +${600 * 4 * RATE:,.2f}†/h" in body  # the totals cover every cluster
    assert body.splitlines()[1].endswith("(:arrows_counterclockwise: changes)")
    summary = Path(env["GITHUB_STEP_SUMMARY"]).read_text()
    assert summary.count("| `train-") == 600


@pytest.mark.parametrize(
    ("flag", "limit", "text"),
    [
        ("--max-hourly-increase", 3 * RATE, f"by ${RATE:,.2f}†"),
        ("--max-monthly-increase", 100.0, f"by ${4 * RATE * 730 - 100:,.2f}†"),
    ],
)
def test_a_crossed_cost_guardrail_blocks_and_says_by_how_much(
    github: GitHubServer, run: Run, tmp_path: Path, flag: str, limit: float, text: str
) -> None:
    """On the bundled placeholder rates, a stack that opts in with failOnPlaceholderPrices."""
    opt_in = {f"{PROJECT}:failOnPlaceholderPrices": "true"}
    dev = _preview(tmp_path, "dev", {"train": (8, 16)}, config=opt_in)  # +4 x rate/h
    code, _ = _post(run, ("dev", dev), extra=(flag, f"{limit:.4f}"))
    (comment,) = github.comments(REPO, PR)
    assert code == 12
    assert ":no_entry: blocked" in comment["body"]
    assert f"over the `{flag}` threshold" in comment["body"]
    assert text in comment["body"]
    assert _post(run, ("dev", dev), extra=(flag, "1000000"))[0] == 10
    assert "threshold" not in github.comments(REPO, PR)[0]["body"]


def test_an_unreadable_preview_gets_a_failure_comment_with_the_log(
    github: GitHubServer, run: Run, tmp_path: Path
) -> None:
    (tmp_path / "dev.json").write_text("")
    (tmp_path / "dev.err").write_text("error: the stack 'dev' is locked by 1 lock(s)\n")
    code, _ = run(
        "--stack",
        f"dev={tmp_path / 'dev.json'}",
        "--preview-log",
        f"dev={tmp_path / 'dev.err'}",
        "--github-pr",
        str(PR),
    )
    (comment,) = github.comments(REPO, PR)
    assert code == 2
    assert comment["body"].startswith(MARKER.format(stack="dev"))
    assert "(:x: preview failed)" in comment["body"]
    assert "is locked by 1 lock(s)" in comment["body"]


def _failing(github: GitHubServer, case: str, env: dict[str, str]) -> dict[str, str]:
    if case == "401":
        return {**env, "GITHUB_TOKEN": "ghs-wrong"}
    if case == "404":
        return {**env, "GITHUB_REPOSITORY": "acme/missing"}
    if case == "5xx":
        github.inject(status=502, count=50)
    if case == "echo":
        github.inject(status=500, count=50, message=f"token {TOKEN} is odd")
    if case == "403":
        github.inject(status=403, count=50, message="Resource not accessible by integration")
    if case == "primary":
        github.inject(kind="primary", status=403, count=50)
    return env


@pytest.mark.parametrize(
    ("case", "said", "fix", "sleeps"),
    [
        ("401", "HTTP 401 Bad credentials", "check GITHUB_TOKEN", 0),
        ("404", "HTTP 404 Not Found", "check GITHUB_REPOSITORY (acme/missing)", 0),
        ("403", "Resource not accessible by integration", "`permissions: pull-requests: write`", 0),
        ("5xx", "HTTP 502 Server Error (still failing after retries", "rerun the job", 4),
        ("echo", "HTTP 500 token *** is odd", "rerun the job", 4),
        ("primary", "HTTP 403 API rate limit exceeded", "rate limit is used up", 0),
    ],
)
def test_a_github_error_is_exit_13_with_the_answer_and_the_fix(
    github: GitHubServer,
    run: Run,
    tmp_path: Path,
    env: dict[str, str],
    case: str,
    said: str,
    fix: str,
    sleeps: int,
) -> None:
    dev = _preview(tmp_path, "dev", {"train": (8, 16)})
    code, err = run(
        "--stack", f"dev={dev}", "--github-pr", str(PR), env=_failing(github, case, env)
    )
    assert code == 13
    assert said in err and fix in err
    assert len(run.sleeps) == sleeps  # 5xx: the policy's 5 attempts; 4xx: none
    assert github.comments(REPO, PR) == []


def test_a_create_answered_5xx_is_not_sent_again(
    github: GitHubServer, run: Run, tmp_path: Path
) -> None:
    github.inject(status=502, count=50, method="POST")
    code, err = _post(run, ("dev", _preview(tmp_path, "dev", {"train": (8, 16)})))
    posts = [r for r in github.requests() if r["method"] == "POST"]
    assert code == 13
    assert "HTTP 502" in err and "not sent again" in err and run.sleeps == []
    assert len(posts) == 1  # it may have been made: a second POST could double the comment
    assert len(github.comments(REPO, PR)) <= 1


def test_without_a_token_it_says_how_to_pass_one(run: Run, tmp_path: Path) -> None:
    dev = _preview(tmp_path, "dev", {"train": (8, 16)})
    code, err = run(
        "--stack", f"dev={dev}", "--github-pr", str(PR), env={"GITHUB_REPOSITORY": REPO}
    )
    assert code == 13
    assert "GITHUB_TOKEN is not set" in err and "secrets.GITHUB_TOKEN" in err


@pytest.mark.parametrize(
    ("retry_after", "waited", "status"),
    [(7, 7.0, 503), ("1.5", 1.5, 408), ("soon", 60.0, 503), (None, 60.0, 503)],
)
def test_a_secondary_rate_limit_is_waited_out(
    github: GitHubServer,
    run: Run,
    tmp_path: Path,
    retry_after: int | str | None,
    waited: float,
    status: int,
) -> None:
    github.inject(kind="secondary", status=403, retry_after=retry_after, method="POST")
    github.inject(status=status, method="GET")
    code, err = _post(run, ("dev", _preview(tmp_path, "dev", {"train": (8, 16)})))
    assert code == 10
    assert run.sleeps[1] == waited and len(run.sleeps) == 2
    assert f"HTTP {status}; retry 1" in err and "HTTP 403; retry 1" in err
    assert len(github.comments(REPO, PR)) == 1


def test_secondary_rate_limits_are_waited_out_only_until_the_deadline(
    github: GitHubServer, run: Run, tmp_path: Path
) -> None:
    github.inject(kind="secondary", status=403, count=5)
    code, err = _post(run, ("dev", _preview(tmp_path, "dev", {"train": (8, 16)})))
    assert code == 13
    assert run.sleeps == [60.0, 60.0, 60.0]  # a 4th minute would end past the 180 s deadline
    assert "still failing after retries for 180s at most" in err
    assert github.comments(REPO, PR) == []


def test_drift_issue_opens_one_then_comments_on_it(
    github: GitHubServer, run: Run, tmp_path: Path, env: dict[str, str]
) -> None:
    report = tmp_path / "report.md"
    report.write_text("`train`: num_gpus 8 → 16")
    env = {**env, "GITHUB_SERVER_URL": "https://github.com", "GITHUB_RUN_ID": "99"}
    args = ("drift-issue", "--stack", "dev", "--report", report, "--pulumi-exit", "7")
    assert run(*args, env=env)[0] == 0
    code, err = run(*args, env=env)
    (issue,) = [i for i in github.issues(REPO) if "pull_request" not in i]
    assert code == 0
    assert issue["title"] == "Together clusters drifted: dev"
    assert [label["name"] for label in issue["labels"]] == ["drift"]
    assert "(pulumi exit 7), https://github.com/acme/gpu/actions/runs/99" in issue["body"]
    assert f"commented on drift issue #{issue['number']}" in err
    (comment,) = github.comments(REPO, issue["number"])
    assert "num_gpus 8 → 16" in comment["body"]
    run("drift-issue", "--stack", "prod", "--report", report, env=env)
    assert len([i for i in github.issues(REPO) if "pull_request" not in i]) == 2


GITHUB_LIMIT = 65_536
"""GitHub's limit on an issue's or comment's body, in characters (written out here, not taken
from the code under test, so that a wrong constant fails)."""
CUT_ENDING = "\n\n<sub>(cut at GitHub's comment limit; the job's log has the rest)</sub>\n"


def test_a_huge_drift_report_is_cut_to_githubs_limit_with_a_note(
    github: GitHubServer, run: Run, tmp_path: Path
) -> None:
    report = tmp_path / "report.md"
    report.write_text("`train`: num_gpus 8 → 16\n" + "x" * 200_000)
    args = ("drift-issue", "--stack", "dev", "--report", report)
    assert run(*args)[0] == 0  # opens the issue
    assert run(*args)[0] == 0  # then comments on it
    (issue,) = [i for i in github.issues(REPO) if "pull_request" not in i]
    (comment,) = github.comments(REPO, issue["number"])
    for body in (issue["body"], comment["body"]):
        assert GITHUB_LIMIT - 100 < len(body) <= GITHUB_LIMIT
        assert body.endswith(CUT_ENDING)
        assert "num_gpus 8 → 16" in body


def test_a_failure_comment_with_a_huge_error_is_cut_to_githubs_limit(
    github: GitHubServer, run: Run, tmp_path: Path
) -> None:
    preview = json.loads(_preview(tmp_path, "dev", {"train": (8, 16)}).read_text())
    preview["config"][f"{PROJECT}:pricesPerGpuHour"] = "H100_SXM=" + "9" * 100_000  # not a map
    source = tmp_path / "dev.json"
    source.write_text(json.dumps(preview))
    log = tmp_path / "dev.err"
    log.write_text("warning: something\n" * 5_000)
    code, _ = run("--stack", f"dev={source}", "--preview-log", f"dev={log}", "--github-pr", str(PR))
    (comment,) = github.comments(REPO, PR)
    assert code == 2
    assert "(:x: preview failed)" in comment["body"]
    assert "pricesPerGpuHour is not a map of GPU type to USD" in comment["body"]
    room = GITHUB_LIMIT - DRILL_SECTION_LIMIT  # what the drill's section may add still fits
    assert room - 100 < len(comment["body"]) <= room
    assert comment["body"].endswith(CUT_ENDING)


def test_as_a_process_it_reads_the_actions_variables(
    github: GitHubServer, tmp_path: Path, env: dict[str, str]
) -> None:
    dev = _preview(tmp_path, "dev", {"train": (8, 16)})
    command = [sys.executable, "-m", "together_provider.preview", "--stack", f"dev={dev}"]
    done = subprocess.run(
        [*command, "--github-pr", str(PR)],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stdout) == (10, "")
    assert "dev: created comment https://github.com/acme/gpu/pull/42#issuecomment-" in done.stderr
    assert [b.splitlines()[0] for b in _bodies(github)] == [MARKER.format(stack="dev")]


def test_a_replacement_says_whether_the_pr_carries_the_approval_label(
    github: GitHubServer, run: Run, tmp_path: Path
) -> None:
    replaced = _preview(tmp_path, "dev", {"train": (8, 16)}, op="replace")
    assert _post(run, ("dev", replaced))[0] == 11
    assert "Needs the `approve-replacement` label" in _bodies(github)[0]
    github.set_labels(REPO, PR, ["approve-replacement"])
    assert _post(run, ("dev", replaced))[0] == 11  # the workflow's gate reads the label too
    (body,) = _bodies(github)
    assert "Approved by the `approve-replacement` label" in body and "Needs the" not in body
