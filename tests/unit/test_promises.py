"""The promises of a page (`testkit.promises`): read from its ``#>`` lines, kept only by whole
lines in the page's order, and a broken one shown beside the screen's line."""

from __future__ import annotations

from pathlib import Path

from testkit.promises import Promise, bash_block, broken, promises

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
        Promise("docs/p.md:41", "13 unchanged", "real"),
        Promise("docs/p.md:42", "3 unchanged", "kwok"),
        Promise("docs/p.md:44", "reclaimed gpu-preemptible-dp-..."),
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
    assert late.startswith("p:2\n  page:   3 unchanged\n  screen: (nothing after")


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
