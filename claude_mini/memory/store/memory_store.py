"""Layer 2: the project's memory folder, its topic files, the MEMORY.md index and the usage record.

Layout of the folder (`paths.memory_dir(cwd)`, DESIGN.md sections 4 and 5):

    MEMORY.md       the index, one line per memory: `- [Title](file.md) — short hook`
    <topic>.md      one memory: YAML frontmatter (name, description, type, ...) + body
    usage.json      how often and when each memory was recalled (for forgetting)
    archive/        deleted memories: moved here, never unlinked; archive/ARCHIVE.md keeps
                    each one's index line, why and when it left, and its usage entry
    logs/           daily logs (memory.mode "log"); not memories

The folder is created on the first write, never on construction or import.
Every write is atomic and every read-modify-write of a shared file (MEMORY.md,
usage.json) holds a cross-process lock, so two sessions saving at once lose
nothing. Bad files (broken frontmatter, binary, non-UTF-8) are listed with a
flag or skipped with a reason; they never raise out of `list()`.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypedDict
from urllib.parse import unquote

import yaml

from claude_mini.memory.fileutil import atomic_write, locked

log = logging.getLogger(__name__)

# --- constants (DESIGN.md section 5) -------------------------------------------------
INDEX_FILENAME = "MEMORY.md"
USAGE_FILENAME = "usage.json"
ARCHIVE_DIR = "archive"
ARCHIVE_INDEX_FILENAME = "ARCHIVE.md"  # inside archive/: what was archived, so it can be restored
LOGS_DIR = "logs"
MEMORY_TYPES = ("user", "feedback", "project", "reference")
INDEX_MAX_LINES = 200
INDEX_MAX_BYTES = 25_000
INDEX_HOOK_MAX_CHARS = 120  # keeps one index line near 150 chars, so 200 lines fit the byte cap
LIST_READ_BYTES = 64 * 1024  # list() only needs the frontmatter and the first body line
READ_MAX_BYTES = 1024 * 1024  # read() of a runaway file stops here (recall cuts to 4 KiB anyway)
VAGUE_MIN_WORDS = 6
VAGUE_MIN_SPECIFIC_WORDS = 3


def _word_set(words: str) -> frozenset[str]:
    return frozenset(words.split())


GENERIC_WORDS = _word_set(
    "notes note misc miscellaneous stuff info information todo todos things thing general "
    "various random tmp temp memo memory memories etc items item"
)
_FILLER_WORDS = _word_set(
    "a an the and or of to in on for with is are was be it this that as at by from about "
    "some my our we i you"
)
_SAFE_FILENAME = re.compile(r"^[^\W_][\w.-]*$")  # letters/digits first; no separators or spaces
_INDEX_ENTRY = re.compile(
    r"^\s*[-*+]\s+\[(?P<title>(?:\\.|[^\]\\])*)\]"
    r"\((?P<target><[^>]*>|[^)\s]+)(?:\s+\"[^\"]*\")?\)"
    r"\s*(?:[—–:-]+\s*)?(?P<hook>.*)$"
)
_FM_LINE = re.compile(r"^([A-Za-z_][\w-]*)\s*:\s?(.*)$")
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # ~30x faster when libyaml is there


# --- errors and records ----------------------------------------------------------------
class MemoryStoreError(Exception):
    """A memory operation that cannot be done; the message says why and what to do."""


class MemoryNotFound(MemoryStoreError):
    """No memory matches the given name or filename."""


class AmbiguousMemoryName(MemoryStoreError):
    """A `name:` value is shared by several files; the message lists them."""


class InvalidMemory(MemoryStoreError, ValueError):
    """Arguments to `write` that would produce a bad memory file."""


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


@dataclass
class SkippedFile:
    """A file in the memory folder that is not a readable memory, and why."""

    path: Path
    reason: str


@dataclass
class ArchivedMemory:
    """What `delete` did: where the file went and the index line it removed."""

    filename: str
    archived_path: Path
    index_line: str | None
    reason: str = "forgotten"
    successor: str | None = None


@dataclass
class IndexEntry:
    """One `- [Title](file.md) — hook` line of MEMORY.md."""

    line_no: int  # 1-based
    title: str
    filename: str
    hook: str
    line: str


class UsageEntry(TypedDict):
    """How often a memory was surfaced by recall, and when last (epoch seconds)."""

    count: int
    last_used: float


@dataclass
class Finding:
    """One problem `doctor` found; `fixable` ones `fix` can repair mechanically."""

    kind: str
    file: str
    message: str
    fixable: bool = False


# --- small helpers -------------------------------------------------------------------
def iso_utc(ts: float) -> str:
    """Epoch seconds as `2026-11-30T12:00:00Z` (the form used in frontmatter and manifests)."""
    return datetime.fromtimestamp(ts, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def one_line(text: str) -> str:
    """`text` with all whitespace runs (newlines included) collapsed to single spaces."""
    return " ".join(str(text).split())


def slugify(text: str, max_len: int = 48) -> str:
    """A safe filename stem for `text`: lowercase words joined by '-' (e.g. for `memory add`)."""
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    if len(slug) > max_len:
        slug = slug[:max_len].rsplit("-", 1)[0] or slug[:max_len]
    return slug or "memory"


def safe_filename(filename: str) -> str:
    """`filename` checked to be a plain file in the memory folder, with `.md` appended if missing."""
    name = filename.strip()
    if not name.lower().endswith(".md"):
        name += ".md"
    if not _SAFE_FILENAME.match(name) or ".." in name:
        raise InvalidMemory(
            f"invalid memory filename {filename!r}: use letters, digits, '-', '_' or '.', "
            "no folders, no spaces, not starting with '.' (e.g. 'deploy-steps.md')"
        )
    if name.lower() == INDEX_FILENAME.lower():
        raise InvalidMemory(f"{INDEX_FILENAME} is the index, not a memory; pick another name")
    return name


def _first_content_line(body: str) -> str:
    for line in body.splitlines():
        text = line.strip().lstrip("#>*-").strip()
        if text and text not in ("---", "..."):
            return text[:200]
    return ""


def _decode(data: bytes, truncated: bool) -> tuple[str | None, str | None]:
    """(text, None) or (None, reason the bytes are not a text memory)."""
    if b"\x00" in data[:8192]:
        return None, "binary file (contains NUL bytes)"
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as e:
        # A read cut mid-character is fine; a bad byte anywhere else is not.
        if truncated and e.start >= len(data) - 3:
            return data[: e.start].decode("utf-8", errors="replace"), None
        return None, f"not UTF-8 (invalid byte at offset {e.start})"


def read_text_head(path: Path, limit: int) -> tuple[str | None, str | None]:
    """The first `limit` bytes of `path` as text, or (None, why it was skipped)."""
    try:
        with open(path, "rb") as f:
            data = f.read(limit + 1)
    except OSError as e:
        return None, f"unreadable ({e.strerror or e})"
    truncated = len(data) > limit
    return _decode(data[:limit], truncated)


# --- frontmatter ---------------------------------------------------------------------
def parse_memory_text(text: str) -> ParsedMemory:
    """Split a topic file into frontmatter and body; never raises, reports what is wrong."""
    text = text.removeprefix("\ufeff")
    lines = text.split("\n")
    if lines[0].rstrip() != "---":
        return ParsedMemory(
            {}, text, "no frontmatter (expected a '---' block with name, description, type)",
            "missing",
        )
    end = next((i for i in range(1, len(lines)) if lines[i].rstrip() in ("---", "...")), None)
    if end is None:
        # Unclosed: take the leading `key: value` run as the frontmatter, the rest as body.
        run = 1
        while run < len(lines) and _FM_LINE.match(lines[run].rstrip("\r")):
            run += 1
        fm, _ = _salvage(lines[1:run])
        body = "\n".join(lines[run:])
        return ParsedMemory(fm, body, "frontmatter is not closed by a '---' line", "unclosed", False)
    block, body = lines[1:end], "\n".join(lines[end + 1 :]).lstrip("\n")
    return _parse_block(block, body)


def _parse_block(block: list[str], body: str) -> ParsedMemory:
    try:
        data = yaml.load("\n".join(block), Loader=_YAML_LOADER)
    except yaml.YAMLError as e:
        fm, clean = _salvage(block)
        return ParsedMemory(fm, body, f"frontmatter is not valid YAML ({_yaml_error(e)})",
                            "invalid_yaml", clean)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        return ParsedMemory({}, body, "frontmatter is not a 'key: value' mapping", "not_mapping",
                            False)
    problem, kind = _check_fields(data)
    return ParsedMemory(data, body, problem, kind)


def _yaml_error(e: yaml.YAMLError) -> str:
    mark = getattr(e, "problem_mark", None)
    what = getattr(e, "problem", None) or str(e).splitlines()[0]
    # +2: the opening '---' is line 1 of the file and YAML counts from 0.
    return f"line {mark.line + 2}: {what}" if mark is not None else what


def _salvage(block: list[str]) -> tuple[dict[str, Any], bool]:
    """Plain `key: value` pairs from a block YAML refused (often an unquoted ': ')."""
    out: dict[str, Any] = {}
    clean = True
    for raw in block:
        line = raw.rstrip("\r")
        m = _FM_LINE.match(line)
        if not m:
            clean = clean and not line.strip()
            continue
        value = m.group(2).strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        out[m.group(1)] = {"true": True, "false": False}.get(value.lower(), value)
    return out, clean


def _check_fields(fm: dict[str, Any]) -> tuple[str | None, str | None]:
    missing = [k for k in ("name", "description", "type") if not _str_field(fm, k)]
    if missing:
        return f"frontmatter has no {', '.join(missing)}", "missing_field"
    if fm["type"] not in MEMORY_TYPES:
        return (f"unknown type {fm['type']!r} (use one of {', '.join(MEMORY_TYPES)})",
                "bad_type")
    return None, None


def _str_field(fm: dict[str, Any], key: str) -> str:
    value = fm.get(key)
    return one_line(value) if isinstance(value, str | int | float) and str(value).strip() else ""


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
    fm: dict[str, Any] = {"name": one_line(name), "description": one_line(description),
                          "type": type}
    fm.update(extra_frontmatter or {})
    trailer = []
    if why and "**Why:**" not in body:
        trailer.append(f"**Why:** {one_line(why)}")
    if how_to_apply and "**How to apply:**" not in body:
        trailer.append(f"**How to apply:** {one_line(how_to_apply)}")
    text = "\n\n".join(p for p in (body.strip(), "\n".join(trailer)) if p)
    return f"---\n{dump_frontmatter(fm)}---\n\n{text}\n"


def dump_frontmatter(fm: dict[str, Any]) -> str:
    """YAML for a frontmatter block, in the given key order, quoted wherever YAML needs it."""
    return yaml.safe_dump(fm, sort_keys=False, allow_unicode=True, default_flow_style=False,
                          width=10_000)


# --- the index ------------------------------------------------------------------------
def normalise_target(target: str) -> str:
    """An index link target as a memory filename (`./a%20b.md` -> `a b.md`)."""
    target = target.strip().removeprefix("<").removesuffix(">")
    target = unquote(target.split("#", 1)[0])
    while target.startswith("./"):
        target = target[2:]
    return target


def parse_index(text: str) -> list[IndexEntry]:
    """The memory entries of MEMORY.md (other lines, such as headings, are not entries)."""
    entries = []
    for no, line in enumerate(text.splitlines(), start=1):
        m = _INDEX_ENTRY.match(line)
        if m:
            title = re.sub(r"\\(.)", r"\1", m.group("title"))
            entries.append(IndexEntry(no, title, normalise_target(m.group("target")),
                                      m.group("hook").strip(), line))
    return entries


def index_line(filename: str, title: str, hook: str) -> str:
    """One MEMORY.md line: `- [Title](file.md) — hook`, the hook shortened to a sentence."""
    title = one_line(title).replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")
    hook = one_line(hook)
    if len(hook) > INDEX_HOOK_MAX_CHARS:
        hook = hook[: INDEX_HOOK_MAX_CHARS - 1].rsplit(" ", 1)[0].rstrip(",;:.") + "…"
    return f"- [{title}]({filename}) — {hook}" if hook else f"- [{title}]({filename})"


def _apply_index_changes(text: str, adds: dict[str, str], removes: set[str]) -> str:
    """MEMORY.md with entries replaced in place, removed, or appended; other lines kept."""
    out: list[str] = []
    seen: set[str] = set()
    for line in text.splitlines():
        m = _INDEX_ENTRY.match(line)
        target = normalise_target(m.group("target")) if m else None
        if target is None:
            out.append(line)
        elif target in removes or (target in adds and target in seen):
            continue  # removed, or a later duplicate of an entry being rewritten
        elif target in adds:
            out.append(adds[target])
            seen.add(target)
        else:
            out.append(line)
    out.extend(line for target, line in adds.items() if target not in seen)
    return "\n".join(out) + "\n" if out else ""


def render_index_for_prompt(text: str) -> tuple[str, str | None]:
    """MEMORY.md as injected: first 200 lines, then first 25,000 bytes cut at a newline.

    Returns (text for the prompt, warning). When a limit was hit the warning
    line is already appended to the text; it is also returned on its own so
    the UI can tell the user once.
    """
    lines = text.splitlines()
    total_lines, total_bytes = len(lines), len(text.encode("utf-8"))
    cut = "\n".join(lines[:INDEX_MAX_LINES])
    over_lines = total_lines > INDEX_MAX_LINES
    data = cut.encode("utf-8")
    over_bytes = len(data) > INDEX_MAX_BYTES
    if over_bytes:
        head = data[:INDEX_MAX_BYTES]
        nl = head.rfind(b"\n")
        cut = (head[:nl] if nl > 0 else head).decode("utf-8", errors="ignore")
    if not (over_lines or over_bytes):
        return text.rstrip("\n"), None
    warning = _index_warning(total_lines, total_bytes, cut, over_lines, over_bytes)
    return f"{cut.rstrip(chr(10))}\n\n{warning}", warning


def _index_warning(lines: int, size: int, cut: str, over_lines: bool, over_bytes: bool) -> str:
    kept_lines = len(cut.splitlines())
    if over_lines and over_bytes:
        what = (f"{lines} lines and {size:,} bytes (limits: {INDEX_MAX_LINES} lines, "
                f"{INDEX_MAX_BYTES:,} bytes). Only the first {kept_lines} lines were loaded")
    elif over_lines:
        what = (f"{lines} lines (limit: {INDEX_MAX_LINES}). "
                f"Only the first {INDEX_MAX_LINES} were loaded")
    else:
        what = (f"{size:,} bytes (limit: {INDEX_MAX_BYTES:,}). "
                f"Only the first {kept_lines} lines ({len(cut.encode()):,} bytes) were loaded")
    return (f"> WARNING: MEMORY.md is {what}; keep index lines short and move detail into "
            "topic files (claude-mini memory doctor).")


# --- the archive index (archive/ARCHIVE.md) --------------------------------------------
_ARCHIVE_META = re.compile(r"\s*<!-- archived: (?P<meta>\{.*\}) -->\s*$")
_PLAIN_TARGET = re.compile(r"[^\s()<>]+")
ARCHIVE_HEADER = """\
# Archived memories

Memories moved out of MEMORY.md by `memory forget`, `memory gc` and `/dream`. Nothing here is \
loaded into the prompt; recall still searches what gc archived and brings back what it picks. \
Bring one back yourself with `claude-mini memory restore NAME`.

"""


@dataclass
class ArchiveEntry:
    """One line of archive/ARCHIVE.md: an archived file, where it came from and why it left."""

    file: str  # relative to archive/
    original: str  # its filename when it was live
    index_line: str  # its MEMORY.md line as it was (pointing at `original`)
    archived_at: float | None
    reason: str
    successor: str | None  # the memory that replaced it (a /dream merge or rewrite)
    usage: UsageEntry | None  # its usage record entry, given back on restore
    line: str


def retarget_index_line(line: str, filename: str) -> str:
    """An index line with its link pointing at `filename`, title and hook unchanged."""
    m = _INDEX_ENTRY.match(line)
    if m is None:
        raise InvalidMemory(f"not an index line: {line!r}")
    target = filename if _PLAIN_TARGET.fullmatch(filename) else f"<{filename}>"
    start, end = m.span("target")
    return line[:start] + target + line[end:]


def archive_index_line(entry: ArchiveEntry) -> str:
    """The ARCHIVE.md line for `entry`: its index line pointing into archive/, plus metadata."""
    meta = {"from": entry.original, "reason": entry.reason, "by": entry.successor,
            "at": iso_utc(entry.archived_at) if entry.archived_at is not None else None,
            "usage": entry.usage}
    meta_json = json.dumps(meta, ensure_ascii=False, separators=(", ", ": "))
    return f"{retarget_index_line(entry.index_line, entry.file)} <!-- archived: {meta_json} -->"


def parse_archive_index(text: str) -> list[ArchiveEntry]:
    """The entries of ARCHIVE.md; hand-written `- [T](f.md)` lines count, with unknown history."""
    out = []
    for line in text.splitlines():
        m = _ARCHIVE_META.search(line)
        head = line[: m.start()] if m else line
        parsed = parse_index(head)
        if not parsed:
            continue
        meta = _archive_meta(m.group("meta")) if m else {}
        original = meta.get("from") if isinstance(meta.get("from"), str) else parsed[0].filename
        out.append(ArchiveEntry(
            file=parsed[0].filename, original=original,
            index_line=retarget_index_line(head.rstrip(), original),
            archived_at=epoch_of(meta.get("at")), reason=str(meta.get("reason") or "unknown"),
            successor=meta.get("by") if isinstance(meta.get("by"), str) else None,
            usage=_usage_entry(meta.get("usage")), line=line))
    return out


def _archive_meta(raw: str) -> dict[str, Any]:
    try:
        meta = json.loads(raw)
    except ValueError:
        return {}
    return meta if isinstance(meta, dict) else {}


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


def _usage_entry(value: Any) -> UsageEntry | None:
    if not isinstance(value, dict):
        return None
    count, last = value.get("count"), value.get("last_used")
    if not isinstance(count, int) or not isinstance(last, int | float):
        return None
    return {"count": count, "last_used": float(last)}


# --- walking the folder ----------------------------------------------------------------
def iter_memory_entries(root: Path, skipped: list[SkippedFile] | None = None,
                        ) -> Iterator[tuple[str, os.DirEntry[str]]]:
    """(filename, DirEntry) of every memory file: `.md` except MEMORY.md, archive/, logs/, hidden.

    Directory symlinks are not followed (no loops); file symlinks must point
    inside the folder. Missing folder: nothing.
    """
    yield from _walk(str(root), "", skipped, os.path.realpath(root))


def _walk(folder: str, prefix: str, skipped: list[SkippedFile] | None, real_root: str,
          ) -> Iterator[tuple[str, os.DirEntry[str]]]:
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        name = entry.name
        if name.startswith("."):
            continue
        if entry.is_dir(follow_symlinks=False):
            if not prefix and name in (ARCHIVE_DIR, LOGS_DIR):
                continue
            yield from _walk(entry.path, f"{prefix}{name}/", skipped, real_root)
        elif name.endswith(".md") and not (not prefix and name == INDEX_FILENAME):
            if entry.is_symlink() and not _inside(entry.path, real_root):
                if skipped is not None:
                    skipped.append(SkippedFile(Path(entry.path),
                                               "symlink pointing outside the memory folder"))
                continue
            if entry.is_file():  # not a FIFO or device: opening those could hang
                yield prefix + name, entry


def _inside(path: str, real_root: str) -> bool:
    real = os.path.realpath(path)
    return real.startswith(real_root + os.sep) and os.path.isfile(real)


# --- the store -----------------------------------------------------------------------
class MemoryStore:
    """The memory folder of one project: list, read, write, delete, index, usage."""

    def __init__(self, root: Path, clock: Callable[[], float] = time.time) -> None:
        self.root = Path(root)
        self.clock = clock
        self.skipped: list[SkippedFile] = []  # refreshed by every list()
        self.warnings: list[str] = []  # problems worth telling the user once

    @property
    def index_path(self) -> Path:
        """MEMORY.md."""
        return self.root / INDEX_FILENAME

    @property
    def usage_path(self) -> Path:
        """usage.json, the recall usage record."""
        return self.root / USAGE_FILENAME

    @property
    def archive_dir(self) -> Path:
        """Where deleted memories go."""
        return self.root / ARCHIVE_DIR

    # -- reading --
    def list(self) -> list[MemoryRecord]:
        """Every memory file, sorted by filename; unreadable files go to `self.skipped`."""
        self.skipped = []
        records = []
        for filename, entry in iter_memory_entries(self.root, self.skipped):
            record = self._load(filename, Path(entry.path), LIST_READ_BYTES)
            if record is not None:
                records.append(record)
        return records

    def read(self, name_or_filename: str) -> MemoryRecord:
        """One memory with its body (and full frontmatter); raises MemoryNotFound."""
        path = self.resolve(name_or_filename)
        skipped: list[SkippedFile] = []
        record = self._load(self._rel(path), path, READ_MAX_BYTES, skipped, with_body=True)
        if record is None:
            raise MemoryStoreError(f"cannot read {path.name}: {skipped[0].reason}")
        return record

    def _load(self, filename: str, path: Path, limit: int,
              skipped: list[SkippedFile] | None = None,
              with_body: bool = False) -> MemoryRecord | None:
        skipped = self.skipped if skipped is None else skipped
        try:
            st = path.stat()
        except OSError as e:
            skipped.append(SkippedFile(path, f"unreadable ({e.strerror or e})"))
            return None
        text, reason = read_text_head(path, limit)
        if text is None:
            skipped.append(SkippedFile(path, reason or "unreadable"))
            return None
        parsed = parse_memory_text(text)
        record = record_from_parsed(path, filename, parsed, st.st_mtime, st.st_size)
        if with_body:
            record.body = parsed.body  # cut at READ_MAX_BYTES for a runaway file
        return record

    def exists(self, filename: str) -> bool:
        """Whether a memory file of that exact filename is in the folder."""
        return (self.root / filename).is_file()

    def free_filename(self, stem: str) -> str:
        """A filename from `stem` (slugified) that no memory uses yet: `x.md`, `x-2.md`, ..."""
        base = slugify(stem.removesuffix(".md"))
        candidate, n = f"{base}.md", 2
        while (self.root / candidate).exists():
            candidate, n = f"{base}-{n}.md", n + 1
        return candidate

    def resolve(self, name: str) -> Path:
        """The file for `foo`, `foo.md`, a relative path listed by list(), or a `name:` value."""
        key = name.strip()
        if not key:
            raise MemoryNotFound("no memory name given")
        direct = self._direct_path(key)
        if direct is not None:
            return direct
        records = self.list()
        for matches in (
            [r for r in records if r.filename.casefold() == _with_md(key).casefold()],
            [r for r in records if r.name == key],
            [r for r in records if r.name.casefold() == key.casefold()],
            [r for r in records if slugify(r.name) == slugify(key)],
        ):
            if len(matches) == 1:
                return matches[0].path
            if len(matches) > 1:
                files = ", ".join(r.filename for r in matches)
                raise AmbiguousMemoryName(f"{name!r} matches several memories ({files}); "
                                          "give the filename instead")
        raise MemoryNotFound(f"no memory named {name!r} in {self.root} "
                             "(see `claude-mini memory list`)")

    def _direct_path(self, key: str) -> Path | None:
        """The exact file for `foo`/`foo.md`/`sub/foo.md` when it is a memory, else None."""
        rel = _with_md(key)
        parts = Path(rel).parts
        if (not key or Path(rel).is_absolute() or ".." in parts or parts[0] in (ARCHIVE_DIR, LOGS_DIR)
                or rel == INDEX_FILENAME or any(p.startswith(".") for p in parts)):
            return None
        path = self.root / rel
        if path.is_file() and _inside(str(path), os.path.realpath(self.root)):
            return path
        return None

    def _rel(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    # -- writing --
    def write(
        self,
        filename: str,
        *,
        name: str,
        description: str,
        type: str,
        body: str,
        why: str | None = None,
        how_to_apply: str | None = None,
        extra_frontmatter: dict[str, Any] | None = None,
        index_hook: str | None = None,
    ) -> Path:
        """Save (create or replace) one memory atomically, then put its line in MEMORY.md."""
        fname = safe_filename(filename)
        _validate_memory(name, description, type, extra_frontmatter)
        path = self.root / fname
        now = iso_utc(self.clock())
        extra = dict(extra_frontmatter or {})  # pinned/source first, then the timestamps
        extra.setdefault("created", self._created_of(path) or now)
        extra.setdefault("updated", now)
        text = format_memory(name=name, description=description, type=type, body=body, why=why,
                             how_to_apply=how_to_apply, extra_frontmatter=extra)
        atomic_write(path, text)
        self.update_index(add_or_replace={fname: index_line(fname, name, index_hook or description)})
        return path

    def _created_of(self, path: Path) -> str | None:
        """The `created` stamp of the file being replaced, so a rewrite keeps its birth date."""
        text, _ = read_text_head(path, LIST_READ_BYTES) if path.is_file() else (None, None)
        created = parse_memory_text(text).frontmatter.get("created") if text else None
        if isinstance(created, datetime):
            return created.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        return str(created) if created else None

    def delete(self, name: str, *, reason: str = "forgotten",
               successor: str | None = None) -> ArchivedMemory:
        """Move a memory to archive/ (a distinct name if taken) and drop its index line.

        archive/ARCHIVE.md records its index line, `reason`, the `successor`
        that replaced it (if any) and its usage entry, which leaves usage.json.
        """
        path = self.resolve(name)
        return self._archive(path, move=True, reason=reason, successor=successor)

    def archive_copy(self, name: str, *, reason: str,
                     successor: str | None = None) -> ArchivedMemory:
        """Put a copy of a memory's current bytes in archive/; the live file and its line stay.

        For a memory about to be rewritten in place: the old version stays restorable.
        """
        path = self.resolve(name)
        return self._archive(path, move=False, reason=reason, successor=successor)

    def _archive(self, path: Path, *, move: bool, reason: str,
                 successor: str | None) -> ArchivedMemory:
        filename = self._rel(path)
        with locked(self.index_path):
            dest = self._archive_destination(filename)
            dest.parent.mkdir(parents=True, exist_ok=True)
            indexed = next((e.line for e in self.index_entries() if e.filename == filename), None)
            line = indexed or self._fallback_index_line(filename, path)
            if move:
                os.replace(path, dest)  # safe: we hold the lock and checked `dest` is free
                self.update_index(remove=[filename])
                usage = self.take_usage(filename)
            else:
                atomic_write(dest, path.read_bytes())
                shutil.copystat(path, dest)
                usage = self.usage().get(filename)
            entry = ArchiveEntry(self._archive_rel(dest), filename, line, self.clock(), reason,
                                 successor, usage, "")
            self._add_archive_entry(entry)
        return ArchivedMemory(filename, dest, indexed, reason, successor)

    def _fallback_index_line(self, filename: str, path: Path) -> str:
        record = self._load(filename, path, LIST_READ_BYTES, skipped=[])
        if record is None:
            return index_line(filename, Path(filename).stem, "")
        return index_line(filename, record.name, record.description)

    def _archive_destination(self, filename: str) -> Path:
        dest = self.archive_dir / filename
        n = 2
        while dest.exists() or dest.is_symlink() or dest == self.archive_index_path:
            stem = Path(filename).stem
            dest = (self.archive_dir / filename).with_name(f"{stem}-{n}.md")
            n += 1
        return dest

    # -- the archive --
    @property
    def archive_index_path(self) -> Path:
        """archive/ARCHIVE.md: one line per archived memory, with what restore needs."""
        return self.archive_dir / ARCHIVE_INDEX_FILENAME

    def _archive_rel(self, path: Path) -> str:
        return path.relative_to(self.archive_dir).as_posix()

    def archive_entries(self) -> list[ArchiveEntry]:
        """The lines of archive/ARCHIVE.md, oldest first."""
        try:
            text = self.archive_index_path.read_bytes().decode("utf-8", errors="replace")
        except (FileNotFoundError, NotADirectoryError):
            return []
        return parse_archive_index(text)

    def _add_archive_entry(self, entry: ArchiveEntry) -> None:
        with locked(self.archive_index_path):
            try:
                text = self.archive_index_path.read_bytes().decode("utf-8", errors="replace")
            except FileNotFoundError:
                text = ARCHIVE_HEADER
            text = text if not text or text.endswith("\n") else text + "\n"
            atomic_write(self.archive_index_path, text + archive_index_line(entry) + "\n")

    def remove_archive_entry(self, file: str) -> bool:
        """Drop the ARCHIVE.md line of archived `file` (relative to archive/); True if found."""
        with locked(self.archive_index_path):
            try:
                text = self.archive_index_path.read_bytes().decode("utf-8", errors="replace")
            except FileNotFoundError:
                return False
            lines = text.splitlines()
            for i, line in enumerate(lines):
                entries = parse_archive_index(line)
                if entries and entries[0].file == file:
                    del lines[i]
                    atomic_write(self.archive_index_path, "\n".join(lines) + "\n")
                    return True
        return False

    # -- the index --
    def index_text(self) -> str:
        """MEMORY.md as text ('' if missing; undecodable bytes replaced)."""
        try:
            return self.index_path.read_bytes().decode("utf-8", errors="replace")
        except (FileNotFoundError, NotADirectoryError):
            return ""

    def _index_text_strict(self) -> str:
        # Rewriting an undecodable index would silently replace the user's bytes.
        try:
            return self.index_path.read_bytes().decode("utf-8")
        except (FileNotFoundError, NotADirectoryError):
            return ""
        except UnicodeDecodeError as e:
            raise MemoryStoreError(
                f"{self.index_path} is not valid UTF-8 (byte {e.start}); it was left unchanged. "
                "Fix or re-save it as UTF-8, then try again") from e

    def index_entries(self) -> list[IndexEntry]:
        """The memory lines of MEMORY.md."""
        return parse_index(self.index_text())

    def update_index(self, add_or_replace: dict[str, str] | None = None,
                     remove: Iterable[str] = ()) -> bool:
        """Add/replace/remove MEMORY.md lines by filename under the lock; True if it changed."""
        adds = {normalise_target(f): _checked_index_line(f, line)
                for f, line in (add_or_replace or {}).items()}
        removes = {normalise_target(f) for f in remove}
        if not adds and not (removes and self.index_path.exists()):
            return False
        with locked(self.index_path):
            old = self._index_text_strict()
            new = _apply_index_changes(old, adds, removes)
            if new == old:
                return False
            atomic_write(self.index_path, new)
            return True

    # -- the usage record --
    def usage(self) -> dict[str, UsageEntry]:
        """filename -> {count, last_used}; a corrupt record is rebuilt from file times."""
        data, problem = self._load_usage()
        if problem is None:
            return data
        self._warn(f"{USAGE_FILENAME} is unreadable ({problem}); using file times instead "
                   "until the next recall rewrites it")
        return self._usage_from_file_times()

    def record_use(self, filenames: Iterable[str], when: float | None = None) -> None:
        """Count one surfacing of each file at `when` (default: now), under the lock."""
        names = [normalise_target(f) for f in filenames]
        if not names:
            return
        when = self.clock() if when is None else when
        with locked(self.usage_path):
            data, problem = self._load_usage()
            if problem is not None:
                data = self._rebuild_usage(problem)
            for name in names:
                entry = data.setdefault(name, {"count": 0, "last_used": when})
                entry["count"] += 1
                entry["last_used"] = max(entry["last_used"], when)
            payload = {"version": 1, "files": dict(sorted(data.items()))}
            atomic_write(self.usage_path, json.dumps(payload, indent=1) + "\n")

    def edit_usage(self, change: Callable[[dict[str, UsageEntry]], None]) -> None:
        """Apply `change` to the usage record under its lock (a corrupt record is rebuilt first)."""
        with locked(self.usage_path):
            data, problem = self._load_usage()
            if problem is not None:
                data = self._rebuild_usage(problem)
            change(data)
            payload = {"version": 1, "files": dict(sorted(data.items()))}
            atomic_write(self.usage_path, json.dumps(payload, indent=1) + "\n")

    def take_usage(self, filename: str) -> UsageEntry | None:
        """Remove and return a file's usage entry (None if it has none or the record is corrupt)."""
        with locked(self.usage_path):
            data, problem = self._load_usage()
            if problem is not None or filename not in data:
                return None
            entry = data.pop(filename)
            payload = {"version": 1, "files": dict(sorted(data.items()))}
            atomic_write(self.usage_path, json.dumps(payload, indent=1) + "\n")
            return entry

    def _load_usage(self) -> tuple[dict[str, UsageEntry], str | None]:
        try:
            raw = json.loads(self.usage_path.read_bytes())
        except FileNotFoundError:
            return {}, None
        except (OSError, ValueError) as e:
            return {}, f"{type(e).__name__}: {e}"
        files = raw.get("files") if isinstance(raw, dict) else None
        if not isinstance(files, dict):
            return {}, "no 'files' mapping"
        out: dict[str, UsageEntry] = {}
        for name, entry in files.items():
            count = entry.get("count") if isinstance(entry, dict) else None
            last = entry.get("last_used") if isinstance(entry, dict) else None
            if not isinstance(count, int) or not isinstance(last, int | float):
                return {}, f"bad entry for {name!r}"
            out[name] = {"count": count, "last_used": float(last)}
        return out, None

    def _rebuild_usage(self, problem: str) -> dict[str, UsageEntry]:
        # Keep the corrupt bytes for a human, then start again from file times.
        backup = self.usage_path.with_name(USAGE_FILENAME + ".corrupt")
        try:
            shutil.copyfile(self.usage_path, backup)
            kept = f"; the old file was kept as {backup.name}"
        except OSError:
            kept = ""
        self._warn(f"{USAGE_FILENAME} was unreadable ({problem}); rebuilt it from file times, "
                   f"so use counts restart at 0{kept}")
        return self._usage_from_file_times()

    def _usage_from_file_times(self) -> dict[str, UsageEntry]:
        return {r.filename: {"count": 0, "last_used": r.mtime} for r in self.list()}

    def _warn(self, message: str) -> None:
        log.warning(message)
        if message not in self.warnings:
            self.warnings.append(message)


def _checked_index_line(filename: str, line: str) -> str:
    """`line` on one line, refused unless it is an index entry pointing at `filename`."""
    line = one_line(line)
    entries = parse_index(line)
    if not entries or entries[0].filename != normalise_target(filename):
        raise InvalidMemory(f"not an index line for {filename}: {line!r} "
                            f"(expected '- [Title]({filename}) — hook')")
    return line


def _with_md(key: str) -> str:
    return key if key.lower().endswith(".md") else key + ".md"


def _validate_memory(name: str, description: str, type: str,
                     extra: dict[str, Any] | None) -> None:
    if type not in MEMORY_TYPES:
        raise InvalidMemory(f"unknown memory type {type!r}: use one of {', '.join(MEMORY_TYPES)}")
    if not one_line(name):
        raise InvalidMemory("a memory needs a name (a short title)")
    if not one_line(description):
        raise InvalidMemory("a memory needs a one-line description (recall decides by it)")
    clash = {"name", "description", "type"} & set(extra or {})
    if clash:
        raise InvalidMemory(f"pass {', '.join(sorted(clash))} as arguments, not in extra_frontmatter")


def record_from_text(path: Path, filename: str, text: str, mtime: float, size: int) -> MemoryRecord:
    """A MemoryRecord from a file's text; broken frontmatter falls back to the first body line."""
    return record_from_parsed(path, filename, parse_memory_text(text), mtime, size)


def record_from_parsed(path: Path, filename: str, parsed: ParsedMemory, mtime: float,
                       size: int) -> MemoryRecord:
    """A MemoryRecord from an already parsed file (saves a second YAML parse)."""
    fm = parsed.frontmatter
    first = _first_content_line(parsed.body)
    type_ = fm.get("type") if fm.get("type") in MEMORY_TYPES else None
    return MemoryRecord(
        path=path,
        filename=filename,
        name=_str_field(fm, "name") or Path(filename).stem,
        description=_str_field(fm, "description") or first,
        type=type_,
        mtime=mtime,
        size=size,
        frontmatter_ok=parsed.ok,
        problem=parsed.problem,
        first_line=first,
        frontmatter=fm,
        problem_kind=parsed.problem_kind,
    )


# --- the system prompt section ---------------------------------------------------------
_PROMPT_SECTION = """\
# Memory

You have a persistent, file-based memory for this project in `{root}`. It outlives this \
conversation: save what a future session would need and could not easily rediscover.

Memory types:
- user: who the user is (role, expertise, how they like to work).
- feedback: corrections or approaches the user confirmed ("don't mock the database").
- project: decisions, goals, deadlines, incidents: context that is not in the code.
- reference: where things live outside the repository (dashboards, tickets, docs).

To save a memory, write one topic file per memory in that folder (e.g. `deploy-steps.md`):

```markdown
---
name: Short title
description: One line saying what this is and when it matters (recall decides by it)
type: feedback
---
The fact or rule itself. Use absolute dates.
**Why:** the reason behind it.
**How to apply:** when and where it applies.
```

feedback and project memories need the **Why:** and **How to apply:** lines. Then add \
one line for it to `MEMORY.md`: `- [Short title](deploy-steps.md) — short hook`. Update \
or remove a memory that turns out wrong instead of adding a contradicting one.

Do not save: what can be derived from the code or git history, temporary state of the \
current task, anything already in CLAUDE.md, secrets or credentials.

## MEMORY.md
"""


def memory_prompt_section(store: MemoryStore) -> str:
    """The system-prompt section explaining the memory system, followed by MEMORY.md."""
    head = _PROMPT_SECTION.format(root=store.root)
    text = store.index_text()
    if not text.strip():
        return head + "(empty: no memories saved yet)\n"
    rendered, _ = render_index_for_prompt(text)
    return head + rendered + "\n"


# --- doctor --------------------------------------------------------------------------
def description_problem(description: str) -> str | None:
    """Why a description is too short or vague for recall to find it, or None if it is fine."""
    words = re.findall(r"[^\W_]+", description.lower())
    if len(words) < VAGUE_MIN_WORDS:
        return (f"description is too short to be recalled ({len(words)} words); say what it is "
                f"about and when it applies, in {VAGUE_MIN_WORDS}+ words")
    specific = [w for w in words if w not in GENERIC_WORDS and w not in _FILLER_WORDS]
    if len(specific) < VAGUE_MIN_SPECIFIC_WORDS:
        return ("description is too vague to be recalled (mostly generic words like "
                "'notes', 'misc', 'info'); name the topic, tool or situation it covers")
    return None


def doctor(store: MemoryStore) -> list[Finding]:
    """Everything wrong with the memory folder that hurts the index or recall."""
    records = store.list()
    findings = _index_findings(store, records)
    findings += _file_findings(records)
    findings += [Finding("unreadable", str(s.path.relative_to(store.root))
                         if s.path.is_relative_to(store.root) else str(s.path),
                         f"skipped: {s.reason}") for s in store.skipped]
    return findings


def _index_findings(store: MemoryStore, records: list[MemoryRecord]) -> list[Finding]:
    findings = []
    known = {r.filename for r in records}
    seen: set[str] = set()
    for entry in store.index_entries():
        if entry.filename in seen:
            findings.append(Finding("duplicate_index_line", entry.filename,
                                    f"MEMORY.md line {entry.line_no} lists it a second time",
                                    True))
        elif entry.filename not in known:
            findings.append(Finding("dangling_index_line", entry.filename,
                                    f"MEMORY.md line {entry.line_no} points at a missing file",
                                    True))
        seen.add(entry.filename)
    findings += [Finding("missing_from_index", r.filename,
                         "not listed in MEMORY.md, so the model does not know it exists", True)
                 for r in records if r.filename not in seen]
    _, warning = render_index_for_prompt(store.index_text())
    if warning:
        findings.append(Finding("index_over_limit", INDEX_FILENAME,
                                warning.removeprefix("> WARNING: ")))
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
            findings += [Finding("duplicate_name", f, "the same name is used by "
                                 + ", ".join(x for x in files if x != f)
                                 + "; merge them or rename one") for f in files]
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
    return [Finding("missing_why_how", r.filename,
                    f"{r.type} memory without {' and '.join(missing)} lines")]


def fix(store: MemoryStore, findings: list[Finding]) -> list[Finding]:
    """Repair the fixable findings (frontmatter first, then the index); returns those fixed."""
    fixed = []
    for f in findings:
        if f.fixable and f.kind in ("missing_frontmatter", "broken_frontmatter") and \
                _repair_frontmatter(store, f.file):
            fixed.append(f)
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
    fm["name"] = _str_field(fm, "name") or Path(filename).stem.replace("-", " ").replace("_", " ")
    fm["description"] = _str_field(fm, "description") or _first_content_line(parsed.body)
    fm["type"] = fm.get("type") or "project"
    if not fm["description"]:
        return None
    ordered = {k: fm[k] for k in ("name", "description", "type")}
    ordered.update({k: v for k, v in fm.items() if k not in ordered})
    return f"---\n{dump_frontmatter(ordered)}---\n\n{parsed.body.strip(chr(10))}\n"
