"""One topic file: YAML frontmatter (name, description, type, ...) and a body.

    ---
    name: Short title
    description: One line saying what this is and when it matters
    type: feedback
    ---
    The fact or rule. **Why:** ... **How to apply:** ...

`parse_memory_text` never raises: it returns what it could read and what is
wrong (`ParsedMemory.problem_kind`), so a broken file is still listed and
`doctor` can repair it. Timestamps in frontmatter are ISO-8601 UTC.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from claude_mini.base.frontmatter import FM_LINE, dump_frontmatter, read_frontmatter, salvage_pairs
from claude_mini.base.text import one_line

MEMORY_TYPES = ("user", "feedback", "project", "reference")
NAME_MAX_WORDS = 7  # a name derived from plain text (`memory add`, `memory import`)
NAME_MAX_CHARS = 60
DESCRIPTION_MAX_CHARS = 150
_DANGLING_WORDS = frozenset(
    {"a", "an", "the", "and", "or", "but", "to", "of", "in", "on", "at", "for", "with", "from", "by", "is", "are"}
)


@dataclass
class ParsedMemory:
    """A topic file split into frontmatter and body, with what is wrong with it (if anything).

    `problem_kind` is one of missing, unclosed, invalid_yaml, not_mapping,
    missing_field, bad_type. For broken YAML, `frontmatter` holds the
    `key: value` lines that could be salvaged and `salvage_clean` says whether
    every line of the block was one.
    """

    frontmatter: dict[str, Any]
    body: str
    problem: str | None = None
    problem_kind: str | None = None
    salvage_clean: bool = True

    @property
    def ok(self) -> bool:
        """True when the frontmatter is valid YAML with a name, a description and a known type."""
        return self.problem is None


@dataclass
class MemoryRecord:
    """One topic file as listed: what recall, the CLI and doctor need to know about it."""

    path: Path
    filename: str  # relative to the memory folder, posix separators
    name: str
    description: str
    type: str | None  # None when missing or not one of MEMORY_TYPES
    mtime: float
    size: int
    frontmatter_ok: bool
    problem: str | None = None
    first_line: str = ""
    frontmatter: dict[str, Any] = field(default_factory=dict)
    body: str | None = None  # filled by read(), not by list()
    problem_kind: str | None = None

    @property
    def pinned(self) -> bool:
        """`pinned: true` in the frontmatter: never archived automatically."""
        return self.frontmatter.get("pinned") is True


# --- value forms ---------------------------------------------------------------------
def iso_utc(ts: float) -> str:
    """Epoch seconds as `2026-11-30T12:00:00Z` (the form used in frontmatter and manifests)."""
    return datetime.fromtimestamp(ts, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def epoch_of(value: Any) -> float | None:
    """Epoch seconds of an ISO time (a string, or the datetime YAML makes of one), else None."""
    if isinstance(value, datetime):
        return (value if value.tzinfo else value.replace(tzinfo=UTC)).timestamp()
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return (parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)).timestamp()


def derive_memory(text: str) -> tuple[str, str]:
    """(name, description) of a memory given as plain text (`memory add TEXT`, a fact another
    assistant kept): a short title and a one-line hook."""
    clean = one_line(text)
    first = re.split(r"[.!?;:](?:\s|$)|\s[—–-]\s", clean, maxsplit=1)[0]
    words = first.split()[:NAME_MAX_WORDS]
    while len(words) > 1 and words[-1].lower() in _DANGLING_WORDS:
        words.pop()  # "The staging DB is at X and" -> "The staging DB is at X"
    name = " ".join(words)
    if len(name) > NAME_MAX_CHARS:
        name = name[: NAME_MAX_CHARS - 1] + "…"
    name = name.rstrip(".,;:!?") or "Memory"
    name = name[0].upper() + name[1:]
    description = clean
    if len(description) > DESCRIPTION_MAX_CHARS:
        description = description[: DESCRIPTION_MAX_CHARS - 1].rsplit(" ", 1)[0] + "…"
    return name, description


def field_text(fm: dict[str, Any], key: str) -> str:
    """A frontmatter field as one line of text ('' when missing, empty or not a scalar)."""
    value = fm.get(key)
    return one_line(str(value)) if isinstance(value, str | int | float) and str(value).strip() else ""


def first_content_line(body: str) -> str:
    """The first line of `body` with text in it, without markdown markers (at most 200 chars)."""
    for line in body.splitlines():
        text = line.strip().lstrip("#>*-").strip()
        if text and text not in ("---", "..."):
            return text[:200]
    return ""


# --- reading -------------------------------------------------------------------------
def parse_memory_text(text: str) -> ParsedMemory:
    """Split a topic file into frontmatter and body; never raises, reports what is wrong."""
    text = text.removeprefix("\ufeff")
    lines = text.split("\n")
    if lines[0].rstrip() != "---":
        return ParsedMemory(
            {},
            text,
            "no frontmatter (expected a '---' block with name, description, type)",
            "missing",
        )
    end = next((i for i in range(1, len(lines)) if lines[i].rstrip() in ("---", "...")), None)
    if end is None:
        # Unclosed: take the leading `key: value` run as the frontmatter, the rest as body.
        run = 1
        while run < len(lines) and FM_LINE.match(lines[run].rstrip("\r")):
            run += 1
        fm, _ = salvage_pairs(lines[1:run])
        body = "\n".join(lines[run:])
        return ParsedMemory(fm, body, "frontmatter is not closed by a '---' line", "unclosed", False)
    read = read_frontmatter(text, "a memory")
    body = read.body.lstrip("\n")
    if read.kind == "invalid_yaml":
        pairs = {k: "" if v is None else v for k, v in (read.meta or {}).items()}
        return ParsedMemory(pairs, body, read.problem, "invalid_yaml", read.clean)
    if read.kind == "not_mapping" or read.meta is None:
        return ParsedMemory({}, body, "frontmatter is not a 'key: value' mapping", "not_mapping", False)
    problem, kind = _check_fields(read.meta)
    return ParsedMemory(read.meta, body, problem, kind)


def _check_fields(fm: dict[str, Any]) -> tuple[str | None, str | None]:
    missing = [k for k in ("name", "description", "type") if not field_text(fm, k)]
    if missing:
        return f"frontmatter has no {', '.join(missing)}", "missing_field"
    if fm["type"] not in MEMORY_TYPES:
        return (f"unknown type {fm['type']!r} (use one of {', '.join(MEMORY_TYPES)})", "bad_type")
    return None, None


def record_from_text(path: Path, filename: str, text: str, mtime: float, size: int) -> MemoryRecord:
    """A MemoryRecord from a file's text; broken frontmatter falls back to the first body line."""
    return record_from_parsed(path, filename, parse_memory_text(text), mtime, size)


def record_from_parsed(path: Path, filename: str, parsed: ParsedMemory, mtime: float, size: int) -> MemoryRecord:
    """A MemoryRecord from an already parsed file (saves a second YAML parse)."""
    fm = parsed.frontmatter
    first = first_content_line(parsed.body)
    type_ = fm.get("type") if fm.get("type") in MEMORY_TYPES else None
    return MemoryRecord(
        path=path,
        filename=filename,
        name=field_text(fm, "name") or Path(filename).stem,
        description=field_text(fm, "description") or first,
        type=type_,
        mtime=mtime,
        size=size,
        frontmatter_ok=parsed.ok,
        problem=parsed.problem,
        first_line=first,
        frontmatter=fm,
        problem_kind=parsed.problem_kind,
    )


# --- writing -------------------------------------------------------------------------
def format_memory(
    *,
    name: str,
    description: str,
    type: str,
    body: str,
    why: str | None = None,
    how_to_apply: str | None = None,
    extra_frontmatter: dict[str, Any] | None = None,
) -> str:
    """The text of a topic file: frontmatter, body, then **Why:** / **How to apply:** if given."""
    fm: dict[str, Any] = {"name": one_line(name), "description": one_line(description), "type": type}
    fm.update(extra_frontmatter or {})
    trailer = []
    if why and "**Why:**" not in body:
        trailer.append(f"**Why:** {one_line(why)}")
    if how_to_apply and "**How to apply:**" not in body:
        trailer.append(f"**How to apply:** {one_line(how_to_apply)}")
    text = "\n\n".join(p for p in (body.strip(), "\n".join(trailer)) if p)
    return f"---\n{dump_frontmatter(fm)}---\n\n{text}\n"
