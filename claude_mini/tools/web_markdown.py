"""A fetched body as text for the model: HTML as markdown, other text as it is, binaries refused.

HTML goes through markdownify (over BeautifulSoup) after the page's chrome is dropped: scripts,
styles, forms, navigation and sidebars (and the page's header and footer when it has no `<main>`
or `<article>`).
Links are made absolute so the model can fetch them next. Compared on saved real pages (a docs-like
blog with code, Wikipedia, a benchmark post with tables, a Python blog): markdownify kept fenced
code, tables and links; html2text (GPL-3.0) kept every navigation link and indented code instead of
fencing it; trafilatura dropped the code fences (code became prose with escaped underscores) and
most links, and brings lxml, dateparser and a dozen more packages. docs/tools.md has the figures.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urljoin

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
_TEXT_TYPES = frozenset(
    {"application/json", "application/xml", "application/javascript", "application/x-javascript", "application/toml"}
)
_CHROME = ("script", "style", "noscript", "template", "svg", "canvas", "iframe", "form", "button", "select")
# Page chrome: all four when the page has no <main> or <article>; inside one, an article's own
# header (its title) and footer stay.
_PAGE_CHROME = ("nav", "header", "footer", "aside")
_ARTICLE_CHROME = ("nav", "aside")


def is_text(content_type: str, body: bytes) -> bool:
    """Whether a body of `content_type` is text the model can read (no type: no NUL byte near the start)."""
    if content_type.startswith("text/") or content_type in _TEXT_TYPES or content_type in HTML_TYPES:
        return True
    if content_type.endswith(("+json", "+xml")):
        return True
    return not content_type and b"\x00" not in body[:8192]


def decode(body: bytes, charset: str | None) -> str:
    """The body as text: its declared charset, else UTF-8; undecodable bytes replaced."""
    try:
        return body.decode(charset or "utf-8", errors="replace")
    except LookupError:  # a charset Python does not know
        return body.decode("utf-8", errors="replace")


def html_to_markdown(html: str, base_url: str) -> tuple[str, str]:
    """(markdown of the page's content, its title) for an HTML document fetched from `base_url`."""
    from bs4 import BeautifulSoup  # lazy: only a session that fetches pays for it
    from bs4.element import Comment, Declaration, Doctype, ProcessingInstruction
    from markdownify import MarkdownConverter

    soup = BeautifulSoup(html, "html.parser")
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    for node in soup.find_all(string=lambda s: isinstance(s, (Comment, Declaration, Doctype, ProcessingInstruction))):
        node.extract()
    root: Any = soup.find("main") or soup.find("article") or soup.body or soup
    chrome = _ARTICLE_CHROME if root.name in ("main", "article") else _PAGE_CHROME
    for tag in root.find_all((*_CHROME, *chrome)):
        tag.decompose()
    _absolute_links(root, base_url)
    markdown = MarkdownConverter(heading_style="ATX", bullets="-", code_language="").convert_soup(root)
    return _tidy(markdown), title


def _absolute_links(root: Any, base_url: str) -> None:
    """Links made absolute against the page's URL; images replaced by their alt text (no data: blobs)."""
    for link in root.find_all("a", href=True):
        href = str(link["href"]).strip()
        if href.lower().startswith(("javascript:", "data:")):
            del link["href"]
        else:
            link["href"] = urljoin(base_url, href)
    for image in root.find_all("img"):
        alt = str(image.get("alt") or "").strip()
        if alt:
            image.replace_with(f"[image: {alt}]")
        else:
            image.decompose()


def _tidy(markdown: str) -> str:
    """Trailing spaces gone, runs of blank lines made one."""
    lines = [line.rstrip() for line in markdown.splitlines()]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip() + "\n"
