"""`claude-mini memory doctor`: what in the memory folder hurts the index or recall, and `fix`.

Findings are about the index (dangling, duplicate or missing lines, over its
limits), about each topic file (broken or missing frontmatter, a description
too short or vague to be recalled, feedback/project memories without
**Why:** and **How to apply:**) and about unreadable files. `fixable` ones are
repaired mechanically by `fix`; the rest need a person.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from claude_mini.base.fileutil import atomic_write, locked
from claude_mini.base.frontmatter import dump_frontmatter
from claude_mini.memory.store.folder import (
    ARCHIVE_DIR,
    INDEX_FILENAME,
    LIST_READ_BYTES,
    READ_MAX_BYTES,
    not_a_file,
    read_text_head,
)
from claude_mini.memory.store.index import (
    CONFLICT_MARKER,
    index_line,
    parse_index,
    render_index_for_prompt,
    sorted_entries,
)
from claude_mini.memory.store.links import record_links
from claude_mini.memory.store.topic import (
    MEMORY_TYPES,
    MemoryRecord,
    field_text,
    first_content_line,
    parse_memory_text,
)

if TYPE_CHECKING:
    from claude_mini.memory.store.memory_store import MemoryStore

VAGUE_MIN_WORDS = 6
VAGUE_MIN_SPECIFIC_WORDS = 3


def _word_set(words: str) -> frozenset[str]:
    return frozenset(words.split())


GENERIC_WORDS = _word_set(
    "notes note misc miscellaneous stuff info information todo todos things thing general "
    "various random tmp temp memo memory memories etc items item"
)
_FILLER_WORDS = _word_set(
    "a an the and or of to in on for with is are was be it this that as at by from about some my our we i you"
)


@dataclass
class Finding:
    """One problem `doctor` found; `fixable` ones `fix` can repair mechanically."""

    kind: str
    file: str
    message: str
    fixable: bool = False


def description_problem(description: str) -> str | None:
    """Why a description is too short or vague for recall to find it, or None if it is fine."""
    words = re.findall(r"[^\W_]+", description.lower())
    if len(words) < VAGUE_MIN_WORDS:
        return (
            f"description is too short to be recalled ({len(words)} words); say what it is "
            f"about and when it applies, in {VAGUE_MIN_WORDS}+ words"
        )
    specific = [w for w in words if w not in GENERIC_WORDS and w not in _FILLER_WORDS]
    if len(specific) < VAGUE_MIN_SPECIFIC_WORDS:
        return (
            "description is too vague to be recalled (mostly generic words like "
            "'notes', 'misc', 'info'); name the topic, tool or situation it covers"
        )
    return None


# --- finding -------------------------------------------------------------------------
def doctor(store: MemoryStore) -> list[Finding]:
    """Everything wrong with the memory folder that hurts the index or recall."""
    records = store.list()
    problem = not_a_file(store.index_path)
    findings = (
        [
            Finding(
                "index_not_a_file",
                INDEX_FILENAME,
                f"is {problem}, not a file: it is taken as empty and no index line can be "
                f"saved; fix moves it to {ARCHIVE_DIR}/",
                True,
            )
        ]
        if problem
        else []
    )
    text = "" if problem else store.index_text()
    findings += _conflict_findings(text)
    findings += _index_findings(store, records, text)
    findings += _file_findings(records)
    findings += [
        Finding(
            "unreadable",
            str(s.path.relative_to(store.root)) if s.path.is_relative_to(store.root) else str(s.path),
            f"skipped: {s.reason}",
        )
        for s in store.skipped
    ]
    return findings


def conflict_lines(text: str) -> list[int]:
    """The 1-based numbers of the lines of `text` that are git merge-conflict markers."""
    return [no for no, line in enumerate(text.splitlines(), start=1) if CONFLICT_MARKER.match(line)]


def _conflict_findings(text: str) -> list[Finding]:
    lines = conflict_lines(text)
    if not lines:
        return []
    shown = ", ".join(map(str, lines[:6])) + (", ..." if len(lines) > 6 else "")
    return [
        Finding(
            "index_conflict",
            INDEX_FILENAME,
            f"has git merge-conflict markers (lines {shown}); fix rebuilds the index from the memory files",
            True,
        )
    ]


def _index_findings(store: MemoryStore, records: list[MemoryRecord], text: str) -> list[Finding]:
    findings = []
    known = {r.filename for r in records}
    seen: set[str] = set()
    for entry in parse_index(text):
        if entry.filename in seen:
            findings.append(
                Finding(
                    "duplicate_index_line",
                    entry.filename,
                    f"MEMORY.md line {entry.line_no} lists it a second time",
                    True,
                )
            )
        elif entry.filename not in known:
            findings.append(
                Finding(
                    "dangling_index_line",
                    entry.filename,
                    f"MEMORY.md line {entry.line_no} points at a missing file",
                    True,
                )
            )
        seen.add(entry.filename)

    superseded, _ = record_links(records)  # superseded memories leave the index on purpose
    findings += [
        Finding("missing_from_index", r.filename, "not listed in MEMORY.md, so the model does not know it exists", True)
        for r in records
        if r.filename not in seen and r.filename not in superseded
    ]
    _, warning = render_index_for_prompt(text)
    if warning:
        findings.append(Finding("index_over_limit", INDEX_FILENAME, warning.removeprefix("> WARNING: ")))
    return findings


def _file_findings(records: list[MemoryRecord]) -> list[Finding]:
    findings = []
    by_name: dict[str, list[str]] = {}
    for r in records:
        by_name.setdefault(r.name.casefold(), []).append(r.filename)
        if r.problem_kind:
            findings.append(_frontmatter_finding(r))
        problem = description_problem(r.description)
        if problem:
            findings.append(Finding("vague_description", r.filename, problem))
        if r.type in ("feedback", "project") and r.frontmatter_ok:
            findings += _why_how_finding(r)
    for files in by_name.values():
        if len(files) > 1:
            findings += [
                Finding(
                    "duplicate_name",
                    f,
                    "the same name is used by " + ", ".join(x for x in files if x != f) + "; merge them or rename one",
                )
                for f in files
            ]
    return findings


def _frontmatter_finding(r: MemoryRecord) -> Finding:
    text, _ = read_text_head(r.path, READ_MAX_BYTES)
    fixable = text is not None and repaired_text(r.filename, text) is not None
    kind = "missing_frontmatter" if r.problem_kind == "missing" else "broken_frontmatter"
    typed = isinstance(r.frontmatter.get("type"), str) and r.frontmatter["type"].strip()
    hint = "; fix adds it with type: project (check it)" if fixable and not typed else ""
    return Finding(kind, r.filename, f"{r.problem}{hint}", fixable)


def _why_how_finding(r: MemoryRecord) -> list[Finding]:
    text, _ = read_text_head(r.path, LIST_READ_BYTES)
    missing = [m for m in ("**Why:**", "**How to apply:**") if m not in (text or "")]
    if not missing:
        return []
    return [Finding("missing_why_how", r.filename, f"{r.type} memory without {' and '.join(missing)} lines")]


# --- fixing --------------------------------------------------------------------------
def fix(store: MemoryStore, findings: list[Finding]) -> list[Finding]:
    """Repair the fixable findings (a MEMORY.md that is no file, frontmatter, then the index);
    returns those fixed."""
    fixed = [f for f in findings if f.kind == "index_not_a_file" and _move_index_aside(store, f)]
    fixed += [
        f
        for f in findings
        if f.fixable and f.kind in ("missing_frontmatter", "broken_frontmatter") and _repair_frontmatter(store, f.file)
    ]
    conflict = next((f for f in findings if f.kind == "index_conflict"), None)
    if conflict is not None:  # the rebuild also settles every other index line
        conflict.message = rebuild_index(store)
        return [*fixed, conflict]
    records = {r.filename: r for r in store.list()}
    adds: dict[str, str] = {}
    removes: list[str] = []
    for f in findings:
        if not f.fixable:
            continue
        if f.kind == "dangling_index_line" and f.file not in records:
            removes.append(f.file)
        elif f.kind == "missing_from_index" and f.file in records:
            r = records[f.file]
            adds[f.file] = index_line(f.file, r.name, r.description)
        elif f.kind == "duplicate_index_line":
            first = next((e.line for e in store.index_entries() if e.filename == f.file), None)
            if first is None:
                continue
            adds[f.file] = first
        else:
            continue
        fixed.append(f)
    store.update_index(add_or_replace=adds, remove=removes)
    return fixed


def rebuild_index(store: MemoryStore) -> str:
    """Write MEMORY.md anew from the memory files (a merge left it conflicted); what was done.

    Each live memory gets one line: the first line the old index had for it (a hook a person
    wrote is kept), else one made from its name and description. Conflict markers and lines
    of missing or superseded memories go; other lines (headings) stay. Under the index lock.
    """

    records = store.list()
    superseded, _ = record_links(records)
    live = {r.filename: r for r in records if r.filename not in superseded}
    with locked(store.index_path):
        kept, seen = [], set()
        for line in store.index_text().splitlines():
            entry = parse_index(line)
            if CONFLICT_MARKER.match(line):
                continue
            if not entry:
                kept.append(line)
            elif entry[0].filename in live and entry[0].filename not in seen:
                kept.append(line)
                seen.add(entry[0].filename)
        kept += [index_line(f, r.name, r.description) for f, r in live.items() if f not in seen]
        if store.sorted_index:
            kept = sorted_entries(kept)
        atomic_write(store.index_path, "\n".join(kept).strip("\n") + "\n")
    return (
        f"rebuilt from the {len(live)} memory files, conflict markers removed; "
        f"`git add {store.index_path}` to finish the merge (in a git checkout)"
    )


def _move_index_aside(store: MemoryStore, finding: Finding) -> bool:
    """Rename the MEMORY.md that is no file into archive/ (never loaded, never deleted)."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(store.clock()))
    with locked(store.index_path):
        if not not_a_file(store.index_path):
            return False
        store.archive_dir.mkdir(parents=True, exist_ok=True)
        dest, n = store.archive_dir / f"{INDEX_FILENAME}.aside-{stamp}", 2
        while os.path.lexists(dest):
            dest, n = store.archive_dir / f"{INDEX_FILENAME}.aside-{stamp}-{n}", n + 1
        os.rename(store.index_path, dest)
    finding.message = f"it was not a file: moved to {dest.relative_to(store.root)} (the next save writes a new index)"
    return True


def _repair_frontmatter(store: MemoryStore, filename: str) -> bool:
    path = store.root / filename
    text, _ = read_text_head(path, READ_MAX_BYTES)
    new = repaired_text(filename, text) if text is not None else None
    if new is None:
        return False
    atomic_write(path, new)
    return True


def repaired_text(filename: str, text: str) -> str | None:
    """The file with mechanically repaired frontmatter, or None if it needs a human.

    Salvaged `key: value` lines are kept; a missing name comes from the
    filename, a missing description from the first body line, a missing type
    defaults to `project`. A block with lines that are not `key: value`, a
    type that is set but unknown, or no text to describe it is left alone.
    """
    parsed = parse_memory_text(text)
    if parsed.ok or parsed.problem_kind in ("not_mapping", "bad_type"):
        return None
    if parsed.problem_kind in ("unclosed", "invalid_yaml") and not parsed.salvage_clean:
        return None
    fm = dict(parsed.frontmatter)
    if fm.get("type") and fm["type"] not in MEMORY_TYPES:
        return None
    fm["name"] = field_text(fm, "name") or Path(filename).stem.replace("-", " ").replace("_", " ")
    fm["description"] = field_text(fm, "description") or first_content_line(parsed.body)
    fm["type"] = fm.get("type") or "project"
    if not fm["description"]:
        return None
    ordered = {k: fm[k] for k in ("name", "description", "type")}
    ordered.update({k: v for k, v in fm.items() if k not in ordered})
    return f"---\n{dump_frontmatter(ordered)}---\n\n{parsed.body.strip(chr(10))}\n"
