"""MemoryStore: the memory folder of one project as one object — list, read, write, delete.

It does the work on topic files itself and leaves each shared file to its
module: MEMORY.md to `index`, archive/ to `archive`, usage.json to `usage`.
Deleting archives (moves, never unlinks). Writes are atomic; index and usage
changes hold their locks, so two sessions saving at once lose nothing.
"""

from __future__ import annotations

import builtins
import logging
import os
import shutil
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any, Protocol

from claude_mini.base.fileutil import atomic_write, locked
from claude_mini.base.text import one_line
from claude_mini.memory.store.archive import ArchivedMemory, ArchiveEntry, ArchiveIndex
from claude_mini.memory.store.errors import (
    AmbiguousMemoryName,
    InvalidMemory,
    MemoryNotFound,
    MemoryStoreError,
)
from claude_mini.memory.store.folder import (
    ARCHIVE_DIR,
    ARCHIVE_INDEX_FILENAME,
    INDEX_FILENAME,
    LIST_READ_BYTES,
    LOGS_DIR,
    READ_MAX_BYTES,
    USAGE_FILENAME,
    SkippedFile,
    iter_memory_entries,
    read_text_head,
    resolves_inside,
    safe_filename,
    slugify,
)
from claude_mini.memory.store.index import IndexEntry, MemoryIndex, index_line, normalise_target
from claude_mini.memory.store.topic import (
    MEMORY_TYPES,
    MemoryRecord,
    format_memory,
    iso_utc,
    parse_memory_text,
    record_from_parsed,
)
from claude_mini.memory.store.usage import UsageEntry, UsageRecord

log = logging.getLogger(__name__)


class MemoryStore:
    """The memory folder of one project: list, read, write, delete, index, usage."""

    def __init__(
        self,
        root: Path,
        clock: Callable[[], float] = time.time,
        warn: Callable[[str], None] | None = None,
        *,
        sorted_index: bool = False,
    ) -> None:
        self.root = Path(root)
        self.index_path = self.root / INDEX_FILENAME  # MEMORY.md
        self.usage_path = self.root / USAGE_FILENAME  # usage.json, the recall usage record
        self.archive_dir = self.root / ARCHIVE_DIR  # where deleted memories go
        self.archive_index_path = self.archive_dir / ARCHIVE_INDEX_FILENAME  # archive/ARCHIVE.md
        self.clock = clock
        self.sorted_index = sorted_index  # MEMORY.md entries in filename order (the team tier)
        self.warn = warn  # the session's notice channel (or the CLI's stderr): each problem once
        self.skipped: list[SkippedFile] = []  # refreshed by every list()
        self.warnings: list[str] = []  # problems worth telling the user once

    # -- reading --
    def list(self) -> builtins.list[MemoryRecord]:
        """Every memory file, sorted by filename; unreadable files go to `self.skipped`."""
        self.skipped = []
        records = []
        for filename, entry in iter_memory_entries(self.root, self.skipped):
            record = _load(self, filename, Path(entry.path), LIST_READ_BYTES)
            if record is not None:
                records.append(record)
        return records

    def read(self, name_or_filename: str) -> MemoryRecord:
        """One memory with its body (and full frontmatter); raises MemoryNotFound."""
        path = self.resolve(name_or_filename)
        skipped: builtins.list[SkippedFile] = []
        record = _load(self, relative_name(self, path), path, READ_MAX_BYTES, skipped, with_body=True)
        if record is None:
            raise MemoryStoreError(f"cannot read {path.name}: {skipped[0].reason}")
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

    def claim_filename(self, stem: str) -> str:
        """A free filename from `stem`, created empty with O_EXCL, so two processes never pick
        the same one and nothing is overwritten; `write` then fills it. Raises OSError."""
        self.root.mkdir(parents=True, exist_ok=True)
        for _ in range(1000):
            filename = self.free_filename(stem)
            try:
                os.close(os.open(self.root / filename, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
            except FileExistsError:
                continue
            return filename
        raise MemoryStoreError(f"could not find a free filename for {stem!r} in {self.root}")

    def resolve(self, name: str) -> Path:
        """The file for `foo`, `foo.md`, a relative path listed by list(), or a `name:` value."""
        key = name.strip()
        if not key:
            raise MemoryNotFound("no memory name given")
        direct = _direct_path(self, key)
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
                raise AmbiguousMemoryName(f"{name!r} matches several memories ({files}); give the filename instead")
        raise MemoryNotFound(f"no memory named {name!r} in {self.root} (see `claude-mini memory list`)")

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
        extra.setdefault("created", _created_of(self, path) or now)
        extra.setdefault("updated", now)
        text = format_memory(
            name=name,
            description=description,
            type=type,
            body=body,
            why=why,
            how_to_apply=how_to_apply,
            extra_frontmatter=extra,
        )
        atomic_write(path, text)
        self.update_index(add_or_replace={fname: index_line(fname, name, index_hook or description)})
        return path

    def delete(self, name: str, *, reason: str = "forgotten", successor: str | None = None) -> ArchivedMemory:
        """Move a memory to archive/ (a distinct name if taken) and drop its index line.

        archive/ARCHIVE.md records its index line, `reason`, the `successor`
        that replaced it (if any) and its usage entry, which leaves usage.json.
        """
        return _move_to_archive(self, {name: reason}, successor, skip_missing=False)[0]

    def delete_many(self, reasons: dict[str, str]) -> builtins.list[ArchivedMemory]:
        """`delete` for several memories (name -> reason) with one write of MEMORY.md,
        ARCHIVE.md and usage.json for all of them: gc archives hundreds at a time, and one
        write each made it take seconds per hundred. Names that are gone are skipped."""
        return _move_to_archive(self, reasons, None, skip_missing=True)

    def archive_copy(self, name: str, *, reason: str, successor: str | None = None) -> ArchivedMemory:
        """Put a copy of a memory's current bytes in archive/; the live file and its line stay.

        For a memory about to be rewritten in place: the old version stays restorable.
        """
        path = self.resolve(name)
        filename = relative_name(self, path)
        archive = _archive_index(self)
        with locked(self.index_path):
            dest = archive.destination(filename)
            dest.parent.mkdir(parents=True, exist_ok=True)
            indexed = next((e.line for e in self.index_entries() if e.filename == filename), None)
            line = indexed or _fallback_index_line(self, filename, path)
            atomic_write(dest, path.read_bytes())
            shutil.copystat(path, dest)
            archive.add(
                ArchiveEntry(
                    archive.relative(dest),
                    filename,
                    line,
                    self.clock(),
                    reason,
                    successor,
                    self.usage().get(filename),
                    "",
                )
            )
        return ArchivedMemory(filename, dest, indexed, reason, successor)

    # -- the archive --

    def archive_entries(self) -> builtins.list[ArchiveEntry]:
        """The lines of archive/ARCHIVE.md, oldest first."""
        return _archive_index(self).entries()

    def remove_archive_entry(self, file: str) -> bool:
        """Drop the ARCHIVE.md line of archived `file` (relative to archive/); True if found."""
        return _archive_index(self).remove(file)

    # -- the index --
    def index_text(self) -> str:
        """MEMORY.md as text ('' if missing; undecodable bytes replaced)."""
        return _index(self).text()

    def index_entries(self) -> builtins.list[IndexEntry]:
        """The memory lines of MEMORY.md."""
        return _index(self).entries()

    def update_index(self, add_or_replace: dict[str, str] | None = None, remove: Iterable[str] = ()) -> bool:
        """Add/replace/remove MEMORY.md lines by filename under the lock; True if it changed."""
        return _index(self).update(add_or_replace, remove)

    # -- the usage record --
    def usage(self) -> dict[str, UsageEntry]:
        """filename -> {count, last_used}; a corrupt record is rebuilt from file times."""
        return _usage(self).read()

    def record_use(self, filenames: Iterable[str], when: float | None = None) -> None:
        """Count one surfacing of each file at `when` (default: now), under the lock."""
        names = [normalise_target(f) for f in filenames]
        if not names:
            return
        _usage(self).count_uses(names, self.clock() if when is None else when)

    def edit_usage(self, change: Callable[[dict[str, UsageEntry]], None]) -> None:
        """Apply `change` to the usage record under its lock (a corrupt record is rebuilt first)."""
        _usage(self).edit(change)

    def tell(self, message: str) -> None:
        """Tell the user about a problem with the folder, once (the injected `warn`, else the log)."""
        if message in self.warnings:
            return
        self.warnings.append(message)
        if self.warn is not None:
            self.warn(message)
        else:
            log.warning(message)


def _with_md(key: str) -> str:
    return key if key.lower().endswith(".md") else key + ".md"


def _validate_memory(name: str, description: str, type: str, extra: dict[str, Any] | None) -> None:
    if type not in MEMORY_TYPES:
        raise InvalidMemory(f"unknown memory type {type!r}: use one of {', '.join(MEMORY_TYPES)}")
    if not one_line(name):
        raise InvalidMemory("a memory needs a name (a short title)")
    if not one_line(description):
        raise InvalidMemory("a memory needs a one-line description (recall decides by it)")
    clash = {"name", "description", "type"} & set(extra or {})
    if clash:
        raise InvalidMemory(f"pass {', '.join(sorted(clash))} as arguments, not in extra_frontmatter")


# -- the store's own helpers, as functions: the class is its public surface
def _index(store: MemoryStore) -> MemoryIndex:
    return MemoryIndex(store.index_path, store.tell, sort=store.sorted_index)


def _archive_index(store: MemoryStore) -> ArchiveIndex:
    return ArchiveIndex(store.archive_dir)


def _usage(store: MemoryStore) -> UsageRecord:
    return UsageRecord(store.usage_path, partial(_usage_from_file_times, store), store.tell)


def _load(
    store: MemoryStore,
    filename: str,
    path: Path,
    limit: int,
    skipped: builtins.list[SkippedFile] | None = None,
    with_body: bool = False,
) -> MemoryRecord | None:
    skipped = store.skipped if skipped is None else skipped
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


def _direct_path(store: MemoryStore, key: str) -> Path | None:
    """The exact file for `foo`/`foo.md`/`sub/foo.md` when it is a memory, else None."""
    rel = _with_md(key)
    parts = Path(rel).parts
    if (
        not key
        or Path(rel).is_absolute()
        or ".." in parts
        or parts[0] in (ARCHIVE_DIR, LOGS_DIR)
        or rel == INDEX_FILENAME
        or any(p.startswith(".") for p in parts)
    ):
        return None
    path = store.root / rel
    if path.is_file() and resolves_inside(str(path), os.path.realpath(store.root)):
        return path
    return None


def relative_name(store: MemoryStore, path: Path) -> str:
    """`path`'s name as the store lists it: relative to its root, with forward slashes."""
    return path.relative_to(store.root).as_posix()


def _created_of(store: MemoryStore, path: Path) -> str | None:
    """The `created` stamp of the file being replaced, so a rewrite keeps its birth date."""
    text, _ = read_text_head(path, LIST_READ_BYTES) if path.is_file() else (None, None)
    created = parse_memory_text(text).frontmatter.get("created") if text else None
    if isinstance(created, datetime):
        return created.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return str(created) if created else None


def _move_to_archive(
    store: MemoryStore, reasons: dict[str, str], successor: str | None, *, skip_missing: bool
) -> list[ArchivedMemory]:
    archive = _archive_index(store)
    moved: builtins.list[tuple[str, Path, str | None, str, str]] = []
    with locked(store.index_path):
        lines = {e.filename: e.line for e in store.index_entries()}
        for name, reason in reasons.items():
            try:
                path = store.resolve(name)
            except MemoryNotFound:
                if skip_missing:
                    continue
                raise
            filename = relative_name(store, path)
            line = lines.get(filename) or _fallback_index_line(store, filename, path)
            dest = archive.destination(filename)
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.replace(path, dest)  # safe: we hold the lock and checked `dest` is free
            moved.append((filename, dest, lines.get(filename), line, reason))
        store.update_index(remove=[m[0] for m in moved])
        usage = _usage(store).take_many(m[0] for m in moved)
        now = store.clock()
        archive.add(
            *(
                ArchiveEntry(archive.relative(dest), filename, line, now, reason, successor, usage.get(filename), "")
                for filename, dest, _, line, reason in moved
            )
        )
    return [ArchivedMemory(filename, dest, indexed, reason, successor) for filename, dest, indexed, _, reason in moved]


def _fallback_index_line(store: MemoryStore, filename: str, path: Path) -> str:
    record = _load(store, filename, path, LIST_READ_BYTES, skipped=[])
    if record is None:
        return index_line(filename, Path(filename).stem, "")
    return index_line(filename, record.name, record.description)


def _usage_from_file_times(store: MemoryStore) -> dict[str, UsageEntry]:
    return {r.filename: {"count": 0, "last_used": r.mtime} for r in store.list()}


class StoreHolder(Protocol):
    """What recall's and extraction's parts read from the runtime: the session's one store (its
    problems and skipped files are said once, so the layers share it rather than open their own)."""

    @property
    def store(self) -> MemoryStore:
        """The project's auto-memory folder."""
        ...
