"""The README stays a front door and its documentation stays navigable: every page under docs/
opens with its title and one sentence saying what it covers, and every relative link in the
README, docs/ and the examples' READMEs reaches a file (and, with a #fragment, a heading there)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
PAGES = sorted((REPO / "docs").glob("*.md"))
LINKED = [README, *PAGES, *sorted((REPO / "examples").glob("*/README.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _prose(text: str) -> str:
    """The text without fenced code blocks (their brackets are code, not links)."""
    return re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)


def _anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^a-z0-9 _-]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    return {_anchor(h) for h in re.findall(r"^#+ (.+)$", _prose(page.read_text()), re.M)}


def test_the_readme_is_a_front_door() -> None:
    assert len(README.read_text().splitlines()) <= 200


def test_the_readme_links_every_docs_page() -> None:
    links = set(LINK.findall(README.read_text()))
    missing = [p.name for p in PAGES if f"docs/{p.name}" not in links]
    assert not missing, f"README's Documentation list lacks {missing}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_each_page_opens_with_a_title_and_what_it_covers(page: Path) -> None:
    title, intro = page.read_text().split("\n\n")[:2]
    assert title.startswith("# ") and "\n" not in title
    # One sentence of prose: not a heading, list, table or code, and no second sentence.
    assert intro[0].isalpha() and intro.endswith("."), intro
    assert not re.search(r"[.!?] [A-Z]", intro), f"more than one sentence: {intro}"


@pytest.mark.parametrize("page", LINKED, ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_resolves(page: Path) -> None:
    broken = []
    for target in LINK.findall(_prose(page.read_text())):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, fragment = target.partition("#")
        destination = (page.parent / path).resolve() if path else page
        unknown_heading = fragment and destination.suffix == ".md"
        if not destination.exists() or (unknown_heading and fragment not in _anchors(destination)):
            broken.append(target)
    assert not broken, f"{page.relative_to(REPO)}: broken links {broken}"
