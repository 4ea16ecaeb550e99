"""Recall's reach into the archive: what gc put away can still be found, and comes back.

gc keeps MEMORY.md (loaded into every prompt) within its limits by archiving the
memories with the lowest keep-scores. Those are the ones not used lately, which
is not the same as useless: a lasting answer that is asked for every few months
looks idle between the questions. So recall searches the archive as a colder
second tier:

- only what gc archived (reason `gc: ...`) is eligible; a memory a person forgot
  (`memory forget`) or that /dream merged away never comes back by itself;
- the `lexical` strategy scores archived files against the archive's own index,
  next to the live ones (`select_lexical(archive=...)`);
- the manifest offered to the side model ranks archived and live files together
  (`shortlist(archive=...)`), the archived ones marked `archived`: recency and use
  are priors, not filters, so gc decides what MEMORY.md lists, not what recall reaches;
- a chosen archived memory is restored before it is shown (its index line comes
  back, restoring counts as a use), and the user is told in one line.

scripts/bench_forgetting.py measures the effect: without this tier gc lost the
rarely asked answers and recall@5 fell below the folder that never forgets.
"""

from __future__ import annotations

import logging
import os
from dataclasses import replace
from pathlib import Path

from claude_mini.base.fileutil import LockTimeout
from claude_mini.memory.recall.lexical import ARCHIVE_PREFIX, ArchiveView, Candidate
from claude_mini.memory.recall.scan import CandidateScanner
from claude_mini.memory.store import (
    ARCHIVE_INDEX_FILENAME,
    ArchiveEntry,
    MemoryStore,
    MemoryStoreError,
)
from claude_mini.memory.store.restore import GC_REASON_PREFIX, archived_entries, restore_entry

log = logging.getLogger(__name__)

PREFIX = ARCHIVE_PREFIX


def is_archived_name(name: str) -> bool:
    """True for the `archive/<file>` names recall gives archived candidates."""
    return name.startswith(PREFIX)


class ArchiveTier:
    """The memories gc archived, indexed for recall; keep one per session (not thread-safe)."""

    def __init__(self, store: MemoryStore, *, cache_file: Path | None = None) -> None:
        self.store = store
        self.scanner = CandidateScanner(
            store.archive_dir, index_name=ARCHIVE_INDEX_FILENAME, skip_dirs=(), cache_file=cache_file
        )
        self._entries: dict[str, ArchiveEntry] = {}
        self._entries_key: tuple[int, int] | None = None

    def refresh(self) -> ArchiveView:
        """Re-scan the archive (only changed files are read) and return the view to search."""
        self.scanner.scan()
        self._load_entries()
        return ArchiveView(self.scanner.index, self._entries.keys())

    def _load_entries(self) -> None:
        """The gc-archived entries of ARCHIVE.md, re-read only when the file changed."""
        try:
            st = os.stat(self.store.archive_index_path)
            key = (st.st_size, st.st_mtime_ns)
        except OSError:
            key = None
        if key == self._entries_key:
            return
        self._entries_key = key
        entries = archived_entries(self.store) if key else []  # files inside archive/ only
        self._entries = {e.file: e for e in entries if e.reason.startswith(GC_REASON_PREFIX)}

    def original(self, name: str) -> str:
        """The live filename an `archive/<file>` name had (the name itself for a live one)."""
        entry = self._entries.get(name.removeprefix(PREFIX)) if is_archived_name(name) else None
        return entry.original if entry else name

    def candidate(self, name: str) -> Candidate | None:
        """The candidate for an `archive/<file>` name, named that way, if it is eligible."""
        file = name.removeprefix(PREFIX)
        doc = self.scanner.index.docs.get(file)
        if doc is None or file not in self._entries:
            return None
        return replace(doc, filename=name)

    def bring_back(self, name: str, now: float) -> str | None:
        """Restore a recalled `archive/<file>`; its live name, or None if it could not be."""
        entry = self._entries.get(name.removeprefix(PREFIX))
        if entry is None or not (self.store.archive_dir / entry.file).is_file():
            return None
        try:
            live = restore_entry(self.store, entry, now)
        except (MemoryStoreError, LockTimeout, OSError) as exc:
            log.info("could not restore %s from the archive: %s", entry.file, exc)
            return None
        self._entries.pop(entry.file, None)
        return live
