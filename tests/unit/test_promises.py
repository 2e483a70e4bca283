"""The promises of a page (`testkit.promises`): read from its ``#>`` lines, kept only by whole
lines in the page's order, and a broken one shown beside the screen's line."""

from __future__ import annotations

import subprocess
from pathlib import Path

from testkit.promises import END, Promise, bash_block, broken, marked, promises

REPO = Path(__file__).parents[2]

BLOCK = """\
pulumi refresh --yes   # a reclaim is not drift
#>     13 unchanged     [real nodes]
#>     3 unchanged      [KWOK nodes]
echo "reclaimed $NODE"
#> reclaimed gpu-preemptible-dp-...
"""


def test_the_prompt_lines_are_the_promises_with_their_node_kind_and_page_line() -> None:
    assert promises(BLOCK, 40, "docs/p.md") == [
        Promise("docs/p.md:41", "13 unchanged", "real", ends="docs/p.md:42"),
        Promise("docs/p.md:42", "3 unchanged", "kwok", ends="docs/p.md:42"),
        Promise("docs/p.md:44", "reclaimed gpu-preemptible-dp-...", ends="docs/p.md:44"),
    ]


def test_a_promise_matches_a_whole_line_blanks_squeezed_and_dots_for_anything() -> None:
    promise = Promise("p:1", "3 unchanged")
    assert promise.matches("    3 unchanged")
    assert not promise.matches("    13 unchanged")  # not a part of a line
    assert not promise.matches("    3 unchanged, 1 updated")
    table = Promise("p:2", "gpu-preemptible-dp-... Ready,SchedulingDisabled ... preemptible")
    assert table.matches(
        "gpu-preemptible-dp-7f2   Ready,SchedulingDisabled   <none>   2m  preemptible"
    )
    assert Promise("p:3", "a [diff: ~x] (b)").matches("a  [diff: ~x] (b)")  # no regex inside


def test_each_kind_keeps_only_its_own_and_the_shared_promises() -> None:
    expected = promises(BLOCK, 1, "p")
    screen = "Resources:\n    13 unchanged\nreclaimed gpu-preemptible-dp-a1\n"
    assert broken(expected, screen, "real") == []
    (kwok,) = broken(expected, screen, "kwok")
    assert kwok == (
        "p:3\n  page:   3 unchanged\n  screen: 13 unchanged   (screen line 2, the closest)"
    )


def test_promises_are_kept_in_the_pages_order() -> None:
    expected = [Promise("p:1", "~ 1 updated"), Promise("p:2", "3 unchanged")]
    assert broken(expected, "~ 1 updated\n3 unchanged\n", "kwok") == []
    (late,) = broken(expected, "3 unchanged\n~ 1 updated\n", "kwok")
    assert late.startswith("p:2\n  page:   3 unchanged\n  screen: (nothing in its command")


def test_the_demo_pages_promise_for_both_node_kinds() -> None:
    """Each page the demo test runs has promises, some for each node kind; their page lines
    point at the `#>` lines."""
    for page, marker in (("walkthrough.md", "demo"), ("burst.md", "burst")):
        path = REPO / "docs" / page
        block, first = bash_block(path, marker)
        found = promises(block, first, f"docs/{page}")
        assert {p.kind for p in found} == {None, "real", "kwok"}, page
        lines = path.read_text().splitlines()
        for promise in found:
            number = int(promise.where.rsplit(":", 1)[1])
            assert lines[number - 1].lstrip().startswith("#>"), promise


MARKED = """\
false   # its status reaches the next command
#> a
# a comment between promises keeps them one run
#> b  [KWOK nodes]

echo "status $?"
cat <<'EOF'
#> inside a here-document: the page's text, not a promise run
EOF
echo done
#> done
"""


def test_marked_ends_each_commands_output_after_its_promises_keeping_its_status() -> None:
    script = marked(MARKED, 10, "p")
    out = subprocess.run(["bash", "-c", script], capture_output=True, text=True).stdout
    assert out.splitlines() == [
        f"{END}p:13",  # after `false`'s run (a, comment, b): the run's last promise
        "status 1",  # `false`'s status, kept across the END line
        "#> inside a here-document: the page's text, not a promise run",
        "done",
        f"{END}p:20",
    ]
    assert [p.ends for p in promises(MARKED, 10, "p")] == ["p:13", "p:13", "p:20"]


def test_a_promise_is_looked_for_in_its_own_commands_output_only() -> None:
    expected = promises("one\n#> ok\ntwo\n#> 3 unchanged\nthree\n#> done\n", 1, "p")
    # `two` printed 2, `three` printed a 3 later: not `two`'s promise kept by chance, and
    # `three`'s promise still kept (no cascade from the broken one).
    screen = f"ok\n{END}p:2\n2 unchanged\n{END}p:4\n3 unchanged\ndone\n{END}p:6\n"
    (only,) = broken(expected, screen, "kwok")
    assert only.startswith("p:4\n  page:   3 unchanged\n  screen: 2 unchanged   (screen line 3")
    assert only.endswith("its command printed:\n    | 2 unchanged")
    assert broken(expected, screen.replace("2 unchanged", "3 unchanged", 1), "kwok") == []


def test_the_demo_pages_marked_are_bash_that_parses() -> None:
    pages = (("walkthrough.md", "demo"), ("workloads.md", "kubernetes"), ("policy.md", "policy"),
             ("burst.md", "burst"), ("walkthrough.md", "done"))  # fmt: skip
    for page, marker in pages:
        block, first = bash_block(REPO / "docs" / page, marker)
        script = marked(block, first, f"docs/{page}")
        parsed = subprocess.run(["bash", "-n", "-c", script], capture_output=True, text=True)
        assert parsed.returncode == 0, (page, parsed.stderr)
        ends = {p.ends for p in promises(block, first, f"docs/{page}")}
        assert all(f"echo '{END}{end}'" in script for end in ends), page
