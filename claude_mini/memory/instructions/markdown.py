"""Markdown as Layer 1 reads it: block-level HTML comments removed, `@path` imports found.

Fenced code and code spans are code: a comment or an `@` inside them stays
text. Code spans are recognised within one line; indented code blocks are not
code (list items indented four spaces are far more common in instruction files).
"""

from __future__ import annotations

import re

# One scan finds fence lines and block-level comment starts (the leading `\n`
# is a literal prefix, so `re` jumps from line to line); `@` is found with
# str.find (memchr). Line-by-line loops or `^`-anchored MULTILINE patterns
# made loading several times slower than reading the files.
_BLOCK = re.compile(r"\n {0,3}(?:(`{3,}|~{3,})([^\n]*)|<!--)")
_IMPORT_PATH = re.compile(r"[^\s\\`]+(?:\\.[^\s\\`]*)*")  # `\ ` escapes a space
_CODE_SPAN = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)")
_TRAILING_PUNCTUATION = ".,;:!?)]}\"'"
_COMMENT_NEXT = re.compile(r"[ \t]*<!--")


def _block_spans(text: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """(fenced code regions, block-level HTML comment spans), as offsets into `text`.

    A comment inside a fence is code; a fence inside a removed comment is not a fence;
    an unclosed fence runs to the end (CommonMark).
    """
    fences, comments, opening, start, skip_to = [], [], "", 0, 0
    for m in _BLOCK.finditer("\n" + text):  # `\n` first makes the first line a line too
        line_start = m.start()  # the padding shifts offsets by one: this is the line start
        if line_start < skip_to:
            continue
        fence, info = m.group(1), m.group(2)
        if fence is None:
            end = None if opening else _comment_end(text, m.end() - 1)
            if end is not None:
                comments.append((line_start, end))
                skip_to = end
        elif not opening:
            if not (fence[0] == "`" and "`" in info):  # backtick fences' info has no backticks
                opening, start = fence, line_start
        elif fence[0] == opening[0] and len(fence) >= len(opening) and not info.strip():
            fences.append((start, m.end() - 1))
            opening = ""
    if opening:
        fences.append((start, len(text)))
    return fences, comments


def fenced_regions(text: str) -> list[tuple[int, int]]:
    """(start, end) offsets of the fenced code blocks in `text`."""
    return _block_spans(text)[0]


def _in_regions(pos: int, regions: list[tuple[int, int]]) -> bool:
    return any(start <= pos < end for start, end in regions)


def _in_code_span(text: str, pos: int) -> bool:
    """Whether `pos` lies inside a code span of its line (spans across lines are not followed)."""
    line_start = text.rfind("\n", 0, pos) + 1
    if "`" not in text[line_start:pos]:
        return False
    line_end = text.find("\n", pos)
    line = text[line_start : line_end if line_end >= 0 else len(text)]
    offset = pos - line_start
    return any(span.start() <= offset < span.end() for span in _CODE_SPAN.finditer(line))


def _comment_end(text: str, pos: int) -> int | None:
    """Where removal of the comment whose body starts at `pos` stops; None if never closed."""
    close = text.find("-->", pos)
    if close < 0:
        return None
    pos = close + 3
    while (nxt := _COMMENT_NEXT.match(text, pos)) and (close := text.find("-->", nxt.end())) >= 0:
        pos = close + 3  # `<!-- a --> <!-- b -->`: the second goes too
    eol = text.find("\n", pos)
    rest_end = eol if eol >= 0 else len(text)
    if text[pos:rest_end].strip():
        return pos  # text after `-->` on the same line stays
    return rest_end + 1 if eol >= 0 else rest_end


def _import_refs(text: str, skip: list[tuple[int, int]]) -> list[str]:
    """`@path` references outside the `skip` spans and code spans, in order."""
    found, pos = [], text.find("@")
    while pos >= 0:
        # `@` must start the text or follow whitespace: `a@b.c` is an address.
        if (pos == 0 or text[pos - 1].isspace()) and not _in_regions(pos, skip) and not _in_code_span(text, pos):
            m = _IMPORT_PATH.match(text, pos + 1)
            raw = m.group().replace("\\ ", " ").rstrip(_TRAILING_PUNCTUATION) if m else ""
            if "/" in raw or "." in raw:
                found.append(raw)
        pos = text.find("@", pos + 1)
    return found


def scan_markdown(text: str) -> tuple[str, list[str]]:
    """(text without block-level HTML comments, stripped; its @imports outside code and comments)."""
    if "@" not in text and "<!--" not in text:
        return text.strip(), []
    fences, comments = _block_spans(text)
    imports = _import_refs(text, fences + comments)
    kept, cursor = [], 0
    for start, end in comments:
        kept.append(text[cursor:start])
        cursor = end
    kept.append(text[cursor:])
    return "".join(kept).strip(), imports


def strip_html_comments(text: str) -> str:
    """Text without block-level `<!-- -->` comments (those starting a line) outside fenced code."""
    return scan_markdown(text)[0]


def find_imports(text: str) -> list[str]:
    """The `@path` references in `text`, in order, outside code spans, fences and comments."""
    return scan_markdown(text)[1]
