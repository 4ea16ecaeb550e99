"""The archive: memories moved out of MEMORY.md, never unlinked, and archive/ARCHIVE.md about them.

    archive/<file>.md      the memory as it was (a distinct name when one is taken)
    archive/ARCHIVE.md     one line per archived memory: its old index line pointing into
                           archive/, then `<!-- archived: {"from", "reason", "by", "at", "usage"} -->`

ARCHIVE.md keeps what `memory restore` needs to put a memory back as it was:
its filename, its index line and its usage entry. Hand-written
`- [Title](file.md)` lines count too, with unknown history.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from claude_mini.base.fileutil import atomic_write, locked
from claude_mini.memory.store.folder import ARCHIVE_INDEX_FILENAME
from claude_mini.memory.store.index import parse_index, retarget_index_line
from claude_mini.memory.store.topic import epoch_of, iso_utc
from claude_mini.memory.store.usage import UsageEntry, parse_usage_entry

_ARCHIVE_META = re.compile(r"\s*<!-- archived: (?P<meta>\{.*\}) -->\s*$")
ARCHIVE_HEADER = """\
# Archived memories

Memories moved out of MEMORY.md by `memory forget`, `memory gc` and `/dream`. Nothing here is \
loaded into the prompt; recall still searches what gc archived and brings back what it picks. \
Bring one back yourself with `claude-mini memory restore NAME`.

"""


@dataclass
class ArchivedMemory:
    """What `delete` did: where the file went and the index line it removed."""

    filename: str
    archived_path: Path
    index_line: str | None
    reason: str = "forgotten"
    successor: str | None = None


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


# --- lines ---------------------------------------------------------------------------
def archive_index_line(entry: ArchiveEntry) -> str:
    """The ARCHIVE.md line for `entry`: its index line pointing into archive/, plus metadata."""
    meta = {
        "from": entry.original,
        "reason": entry.reason,
        "by": entry.successor,
        "at": iso_utc(entry.archived_at) if entry.archived_at is not None else None,
        "usage": entry.usage,
    }
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
        moved_from = meta.get("from")
        original = moved_from if isinstance(moved_from, str) else parsed[0].filename
        out.append(
            ArchiveEntry(
                file=parsed[0].filename,
                original=original,
                index_line=retarget_index_line(head.rstrip(), original),
                archived_at=epoch_of(meta.get("at")),
                reason=str(meta.get("reason") or "unknown"),
                successor=meta.get("by") if isinstance(meta.get("by"), str) else None,
                usage=parse_usage_entry(meta.get("usage")),
                line=line,
            )
        )
    return out


def _archive_meta(raw: str) -> dict[str, Any]:
    try:
        meta = json.loads(raw)
    except ValueError:
        return {}
    return meta if isinstance(meta, dict) else {}


# --- the folder ----------------------------------------------------------------------
class ArchiveIndex:
    """archive/ of one memory folder and its ARCHIVE.md, changed under ARCHIVE.md's lock."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    @property
    def path(self) -> Path:
        """archive/ARCHIVE.md: one line per archived memory, with what restore needs."""
        return self.folder / ARCHIVE_INDEX_FILENAME

    def entries(self) -> list[ArchiveEntry]:
        """The lines of archive/ARCHIVE.md, oldest first."""
        try:
            text = self.path.read_bytes().decode("utf-8", errors="replace")
        except (FileNotFoundError, NotADirectoryError):
            return []
        return parse_archive_index(text)

    def add(self, *entries: ArchiveEntry) -> None:
        """Append the lines of `entries`, in one write (the file starts with ARCHIVE_HEADER)."""
        if not entries:
            return
        with locked(self.path):
            try:
                text = self.path.read_bytes().decode("utf-8", errors="replace")
            except FileNotFoundError:
                text = ARCHIVE_HEADER
            text = text if not text or text.endswith("\n") else text + "\n"
            atomic_write(self.path, text + "".join(archive_index_line(e) + "\n" for e in entries))

    def remove(self, file: str) -> bool:
        """Drop the ARCHIVE.md line of archived `file` (relative to archive/); True if found."""
        with locked(self.path):
            try:
                text = self.path.read_bytes().decode("utf-8", errors="replace")
            except FileNotFoundError:
                return False
            lines = text.splitlines()
            for i, line in enumerate(lines):
                entries = parse_archive_index(line)
                if entries and entries[0].file == file:
                    del lines[i]
                    atomic_write(self.path, "\n".join(lines) + "\n")
                    return True
        return False

    def destination(self, filename: str) -> Path:
        """Where a memory called `filename` goes in archive/: its name, or `name-2.md`, ... if taken."""
        dest = self.folder / filename
        n = 2
        while dest.exists() or dest.is_symlink() or dest == self.path:
            stem = Path(filename).stem
            dest = (self.folder / filename).with_name(f"{stem}-{n}.md")
            n += 1
        return dest

    def relative(self, path: Path) -> str:
        """`path` relative to archive/, posix separators."""
        return path.relative_to(self.folder).as_posix()
