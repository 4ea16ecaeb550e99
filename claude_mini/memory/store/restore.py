"""Restore: an archived memory back under its old name (or a free one), or a /dream merge undone.

Recall's archive tier (recall/archive.py) restores what it picks through `restore_entry`;
`memory restore` through `restore`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from claude_mini.base.clock import Clock
from claude_mini.base.fileutil import locked
from claude_mini.memory.store.archive import ArchivedMemory, ArchiveEntry
from claude_mini.memory.store.errors import MemoryNotFound, MemoryStoreError
from claude_mini.memory.store.folder import ARCHIVE_DIR, HEAD_LINES, HEAD_READ_BYTES, LOGS_DIR, read_text_head, slugify
from claude_mini.memory.store.index import index_line, parse_index, retarget_index_line
from claude_mini.memory.store.topic import MemoryRecord, parse_memory_text, record_from_parsed
from claude_mini.memory.store.usage import UsageEntry

if TYPE_CHECKING:
    from claude_mini.memory.store.memory_store import MemoryStore


GC_REASON_PREFIX = "gc:"  # ARCHIVE.md reason of what gc archived (recall may bring those back)


@dataclass
class RestoreResult:
    """What restore did: files brought back (archive name -> live name) and any put away."""

    restored: list[tuple[str, str]] = field(default_factory=list)
    archived: list[ArchivedMemory] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def message(self) -> str:
        """One line (plus notes) for the user."""
        parts = [
            f"Restored {live}" + (f" (from {ARCHIVE_DIR}/{src})" if src != live else "") for src, live in self.restored
        ]
        text = "; ".join(parts) + "."
        if self.archived:
            text += " Archived " + ", ".join(a.filename for a in self.archived) + "."
        return " ".join([text, *self.notes])


def restore(store: MemoryStore, name: str, clock: Clock | None = None) -> RestoreResult:
    """Bring an archived memory back; for a live memory with `replaces:`, undo that merge.

    A name that is taken again keeps both: the restored file gets `-2`, `-3`, ...
    Raises MemoryNotFound when nothing in the archive matches.
    """
    now = (clock or store.clock)()
    successor = _live_successor(store, name)
    if successor is not None:
        return _undo_merge(store, successor, now)
    entry = find_archived(store, name)
    result = RestoreResult()
    result.restored.append((entry.file, restore_entry(store, entry, now)))
    if entry.successor and store.exists(entry.successor):
        result.notes.append(
            f"It had been merged into {entry.successor}, which stays; "
            f"`claude-mini memory restore {entry.successor}` undoes the whole merge."
        )
    return result


def _live_successor(store: MemoryStore, name: str) -> MemoryRecord | None:
    try:
        record = store.read(name)
    except MemoryStoreError:
        return None
    return record if _replaces(record) else None


def _replaces(record: MemoryRecord) -> list[str]:
    value = record.frontmatter.get("replaces")
    items = value if isinstance(value, list) else [value] if isinstance(value, str) else []
    return [str(v).strip() for v in items if str(v).strip()]


def _undo_merge(store: MemoryStore, successor: MemoryRecord, now: float) -> RestoreResult:
    """Put the merged memory away, then bring back every original it replaced."""
    entries = [_replaced_entry(store, item, successor.filename) for item in _replaces(successor)]
    found = [e for e in entries if e is not None]
    if not found:
        raise MemoryNotFound(
            f"{successor.filename} replaces {', '.join(_replaces(successor))}, "
            f"but none of them is in {ARCHIVE_DIR}/ any more"
        )
    result = RestoreResult()
    result.archived.append(store.delete(successor.filename, reason="restore: merge undone"))
    for entry in found:
        result.restored.append((entry.file, restore_entry(store, entry, now)))
    missing = len(entries) - len(found)
    if missing:
        result.notes.append(f"{missing} of the originals it replaced were no longer archived.")
    return result


def _replaced_entry(store: MemoryStore, item: str, successor: str) -> ArchiveEntry | None:
    """The archive entry a `replaces:` item names: `archive/x.md`, or an original filename."""
    entries = archived_entries(store)
    if item.startswith(ARCHIVE_DIR + "/"):
        file = item.removeprefix(ARCHIVE_DIR + "/")
        match = [e for e in entries if e.file == file]
        return match[-1] if match else bare_entry(store, file)
    by_successor = [e for e in entries if e.original == item and e.successor == successor]
    match = by_successor or [e for e in entries if e.original == item]
    return match[-1] if match else None


def archived_entries(store: MemoryStore) -> list[ArchiveEntry]:
    """ARCHIVE.md entries whose file is still in archive/ (and stays inside it)."""
    return [e for e in store.archive_entries() if plain_relative(e.file) and (store.archive_dir / e.file).is_file()]


def find_archived(store: MemoryStore, name: str) -> ArchiveEntry:
    """The newest archived memory matching `name` (archive filename, old filename or title)."""
    key = name.strip().removeprefix(ARCHIVE_DIR + "/")
    if not key:
        raise MemoryNotFound("no memory name given")
    md = key if key.lower().endswith(".md") else key + ".md"
    entries = archived_entries(store)
    for test in (
        lambda e: e.file == md,
        lambda e: e.original == md,
        lambda e: _title(e).casefold() == key.casefold(),
        lambda e: slugify(_title(e)) == slugify(key),
    ):
        matches = [e for e in entries if test(e)]
        if matches:
            return max(matches, key=lambda e: e.archived_at or 0.0)
    bare = bare_entry(store, md)
    if bare is not None:
        return bare
    raise MemoryNotFound(f"nothing named {name!r} in {store.archive_dir} (see {ARCHIVE_DIR}/ARCHIVE.md)")


def _title(entry: ArchiveEntry) -> str:
    parsed = parse_index(entry.index_line)
    return parsed[0].title if parsed else ""


def bare_entry(store: MemoryStore, file: str) -> ArchiveEntry | None:
    """An entry for an archived file ARCHIVE.md does not list (archived by hand, or a crash)."""
    path = store.archive_dir / file
    if not plain_relative(file) or not path.is_file() or path == store.archive_index_path:
        return None
    text, _ = read_text_head(path, HEAD_READ_BYTES)
    line = index_line(file, Path(file).stem, "")
    if text is not None:
        head = "\n".join(text.split("\n", HEAD_LINES)[:HEAD_LINES])  # as recall reads a candidate
        record = record_from_parsed(path, file, parse_memory_text(head), path.stat().st_mtime, len(text.encode()))
        line = index_line(file, record.name, record.description)
    return ArchiveEntry(file, file, line, None, "unknown", None, None, line)


def restore_entry(store: MemoryStore, entry: ArchiveEntry, now: float) -> str:
    """Move one archived file back (bytes unchanged), re-add its index line and usage; its live name."""
    src = store.archive_dir / entry.file
    with locked(store.index_path):
        dest_name = _free_live_name(store, entry.original)
        dest = store.root / dest_name
        dest.parent.mkdir(parents=True, exist_ok=True)
        os.replace(src, dest)
        store.update_index(add_or_replace={dest_name: retarget_index_line(entry.index_line, dest_name)})
        store.remove_archive_entry(entry.file)
    store.edit_usage(lambda data: data.__setitem__(dest_name, _restored_usage(entry.usage, now)))
    return dest_name


def _restored_usage(old: UsageEntry | None, now: float) -> UsageEntry:
    # Restoring is a use: without it, the next gc would archive the memory again at once.
    return {"count": (old["count"] if old else 0) + 1, "last_used": now}


def plain_relative(name: str) -> bool:
    """A relative path with no `..`, no hidden part, that stays inside its folder."""
    parts = Path(name).parts
    return bool(parts) and not Path(name).is_absolute() and not any(p == ".." or p.startswith(".") for p in parts)


def _free_live_name(store: MemoryStore, filename: str) -> str:
    """`filename` if no live file has it, else `stem-2.md`, `stem-3.md`, ...

    A name ARCHIVE.md says the file had that would leave the folder (edited by hand)
    is reduced to its last part.
    """
    if not plain_relative(filename) or Path(filename).parts[0] in (ARCHIVE_DIR, LOGS_DIR):
        filename = Path(filename).name if plain_relative(Path(filename).name) else "restored.md"
    if not filename.endswith(".md"):
        filename += ".md"
    path = Path(filename)
    candidate, n = filename, 2
    while (store.root / candidate).exists() or (store.root / candidate).is_symlink():
        candidate = path.with_name(f"{path.stem}-{n}{path.suffix or '.md'}").as_posix()
        n += 1
    return candidate
