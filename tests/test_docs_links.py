"""Every relative link in README.md and docs/*.md leads somewhere: the file exists and, for a
`#anchor`, the page has a heading GitHub gives that anchor. The README links the docs/ pages
and the pages link each other, so a heading renamed or a section moved shows up here.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# `[text](target)` or `![alt](target)`, with an optional "title" after the target.
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r" {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")


def prose_lines(text: str) -> list[str]:
    """The page's lines outside fenced code blocks."""
    lines, fence = [], ""
    for line in text.splitlines():
        marker = re.match(r" {0,3}(`{3,}|~{3,})", line)
        if marker and (not fence or marker.group(1).startswith(fence)):
            fence = "" if fence else marker.group(1)[:3]
            continue
        if not fence:
            lines.append(line)
    return lines


def anchor(heading: str) -> str:
    """GitHub's anchor for a heading: markup dropped, lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = re.sub(r"[`*]|<[^>]+>", "", text).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """Every anchor the page's headings give, a repeated one numbered `-1`, `-2` as GitHub does."""
    seen: Counter[str] = Counter()
    found = set()
    for line in prose_lines(page.read_text()):
        if match := HEADING.fullmatch(line):
            slug = anchor(match.group(2))
            found.add(f"{slug}-{seen[slug]}" if seen[slug] else slug)
            seen[slug] += 1
    return found


def relative_links(page: Path) -> list[str]:
    """The targets of the page's links that stay inside the repository (code spans are not links)."""
    targets = []
    for line in prose_lines(page.read_text()):
        line = re.sub(r"(`+).*?\1", "", line)
        targets += [t for t in LINK.findall(line) if not re.match(r"[a-z][a-z0-9+.-]*:|/", t)]
    return targets


def broken(page: Path, target: str) -> str | None:
    """Why `target`, linked from `page`, leads nowhere (None when it resolves)."""
    path, _, fragment = target.partition("#")
    dest = (page.parent / path).resolve() if path else page
    if not dest.exists():
        return f"{target}: no file {dest.relative_to(ROOT) if dest.is_relative_to(ROOT) else dest}"
    if fragment and dest.suffix == ".md" and fragment not in anchors(dest):
        return f"{target}: no heading with the anchor #{fragment} in {dest.name}"
    return None


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path) -> None:
    problems = [why for target in relative_links(page) if (why := broken(page, target))]
    assert problems == []


def test_the_readme_links_every_docs_page() -> None:
    linked = {(ROOT / target.partition("#")[0]).resolve() for target in relative_links(ROOT / "README.md")}
    assert set(PAGES[1:]) <= linked


def test_anchors_follow_githubs_rules() -> None:
    assert anchor("Checkpoints and /rewind") == "checkpoints-and-rewind"
    assert anchor("Managing memories: `claude-mini memory` and `/memory`") == (
        "managing-memories-claude-mini-memory-and-memory"
    )
    assert anchor("Importing another assistant's memory") == "importing-another-assistants-memory"
    assert anchor("Instructions (layer 1)") == "instructions-layer-1"


def test_a_link_to_a_missing_heading_or_file_is_caught(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# Title\n\n## Two words\n\n```\n## not a heading\n```\n")
    assert anchors(page) == {"title", "two-words"}
    assert broken(page, "#two-words") is None
    assert broken(page, "#not-a-heading") is not None
    assert broken(page, "other.md") is not None
