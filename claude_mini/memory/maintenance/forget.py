"""Forgetting on purpose, reversibly: keep-scores, archiving (gc), restore, likely duplicates.

A memory system that only ever writes drowns in its own notes. Each memory
gets a keep-score from the usage record (recall surfacings) and its last write:

    score = 0.5 ** (age / halfLife)                                  recency
          + 0.5 * ln(1 + uses) * 0.5 ** (age / (2 * halfLife))      proven usefulness

`age` is the time since the later of its last recall and its last write
(frontmatter `updated`/`created`, else the file time). The use bonus fades twice
as slowly as recency, so a memory that was often useful outlives one that never
was, but a burst of uses months ago does not outlive a memory used now and then
(scripts/bench_forgetting.py: fading it 4x slower kept dead bursts too long).
Memories of type user or feedback, and any with `pinned: true`, score at least 1.0 and are never archived automatically.

gc archives the lowest scores (store.delete: archive/, never unlinked, with the
index line kept in archive/ARCHIVE.md) until MEMORY.md and the file count are
back under 85% of their limits. It runs automatically (`maybe_auto_gc`, at the
start of a session) once the index passes 90% of its 200-line / 25,000-byte
limits or the file count passes 90% of `memory.maxFiles`; the gap between the
two is about a week of new memories, so gc runs now and then, not every session.
What gc archived stays findable: recall searches it as a second tier and restores
what it picks (memory/recall/archive.py). A manual `memory gc` also archives stale
memories (score under 0.05: roughly four half-lives without a use). `restore`
brings an archived memory back under its old name, or a distinct one when that
name is taken again; restoring a memory that /dream wrote (`replaces:` in its
frontmatter) undoes the merge. `memory forget --purge` deletes a memory, and the
archived copies of it that hold likely secrets, for good (`purge_archived`).
"""

from __future__ import annotations

import contextlib
import logging
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from claude_mini.base import paths
from claude_mini.base.clock import Clock
from claude_mini.base.fileutil import LockTimeout, os_error_text
from claude_mini.config.memory_settings import ForgetSettings
from claude_mini.memory.maintenance.doctor import Finding
from claude_mini.memory.recall.lexical import Candidate, candidate_from_text
from claude_mini.memory.recall.scan import delete_index_cache
from claude_mini.memory.secrets.scan import SecretFinding, find_secrets
from claude_mini.memory.store import (
    ARCHIVE_DIR,
    INDEX_MAX_BYTES,
    INDEX_MAX_LINES,
    ArchivedMemory,
    MemoryRecord,
    MemoryStore,
    MemoryStoreError,
    iter_memory_entries,
    read_text_head,
)
from claude_mini.memory.store.folder import HEAD_READ_BYTES
from claude_mini.memory.store.keep import KeepScore, keep_scores
from claude_mini.memory.store.links import record_links
from claude_mini.memory.store.restore import GC_REASON_PREFIX, archived_entries, bare_entry, plain_relative

if TYPE_CHECKING:
    from claude_mini.config import Config

log = logging.getLogger(__name__)


STALE_SCORE = 0.05  # manual gc archives below this: ~4.3 half-lives unused, little use history
HIGH_WATER = 0.9  # automatic gc starts above this share of a limit...
LOW_WATER = 0.85  # ...and archives until everything is under this share
# TF-IDF cosine from which two memories are likely duplicates. On bench_recall's fixture
# (155 memories, 11 hand-made duplicate pairs) 0.3 finds 9 of the 11 pairs and no other
# pair, except memories written from one template for different services, which it groups.
DUPLICATE_THRESHOLD = 0.3
MESSAGE_NAMES = 5


# --- how full the index is -------------------------------------------------------------
@dataclass(frozen=True)
class IndexSize:
    """MEMORY.md lines and bytes, and the number of memory files."""

    lines: int
    bytes: int
    files: int


def index_size(store: MemoryStore, records: list[MemoryRecord] | None = None) -> IndexSize:
    """How big the index and the folder are now (files counted without opening them)."""
    text = store.index_text()
    files = len(records) if records is not None else sum(1 for _ in iter_memory_entries(store.root))
    return IndexSize(len(text.splitlines()), len(text.encode("utf-8")), files)


def pressure(size: IndexSize, settings: ForgetSettings, share: float | None = None) -> list[str]:
    """Which limits `size` is above `share` (default HIGH_WATER) of, as phrases for the user."""
    share = HIGH_WATER if share is None else share
    out = []
    if size.lines > share * INDEX_MAX_LINES:
        out.append(f"MEMORY.md has {size.lines} lines (limit {INDEX_MAX_LINES})")
    if size.bytes > share * INDEX_MAX_BYTES:
        out.append(f"MEMORY.md has {size.bytes:,} bytes (limit {INDEX_MAX_BYTES:,})")
    if size.files > share * settings.max_files:
        out.append(f"there are {size.files} memory files (memory.maxFiles {settings.max_files})")
    return out


# --- gc --------------------------------------------------------------------------------
@dataclass
class GcPlan:
    """What gc would archive, and why."""

    victims: list[KeepScore]
    reasons: list[str]  # the limits that are nearly reached; empty when only stale ones go
    before: IndexSize
    after: IndexSize
    blocked: str | None = None  # why the limits cannot be met (protected memories fill them)


@dataclass
class GcResult:
    """What gc did (nothing when `dry_run`)."""

    plan: GcPlan
    archived: list[ArchivedMemory] = field(default_factory=list)
    dry_run: bool = False


def plan_gc(
    store: MemoryStore, settings: ForgetSettings | None = None, now: float | None = None, *, stale: bool = True
) -> GcPlan:
    """Choose the memories to archive: stale ones (if `stale`), then, if the index is near a
    limit, the lowest-scoring ones until it is under LOW_WATER of each limit."""
    settings = settings or ForgetSettings()
    records = store.list()
    scores = keep_scores(store, now, settings, records)
    before = index_size(store, records)
    reasons = pressure(before, settings)
    line_bytes = {e.filename: len(e.line.encode("utf-8")) + 1 for e in store.index_entries()}
    victims: list[KeepScore] = []
    size = before
    for s in scores:
        if s.protected:
            continue
        if (stale and s.score < STALE_SCORE) or (reasons and pressure(size, settings, LOW_WATER)):
            victims.append(s)
            size = _without(size, line_bytes.get(s.filename))
    blocked = None
    if pressure(size, settings, 1.0):
        blocked = (
            "the memories gc may not archive (user, feedback, pinned) alone exceed a "
            "limit; run /dream to merge them or unpin some"
        )
    return GcPlan(victims, reasons, before, size, blocked)


def _without(size: IndexSize, line_bytes: int | None) -> IndexSize:
    if line_bytes is None:  # not in the index: only the file count drops
        return IndexSize(size.lines, size.bytes, size.files - 1)
    return IndexSize(size.lines - 1, size.bytes - line_bytes, size.files - 1)


def gc(
    store: MemoryStore,
    settings: ForgetSettings | None = None,
    clock: Clock | None = None,
    *,
    dry_run: bool = False,
    stale: bool = True,
) -> GcResult:
    """Archive what `plan_gc` chose (never deletes); `dry_run` only plans."""
    now = (clock or store.clock)()
    plan = plan_gc(store, settings, now, stale=stale)
    result = GcResult(plan, dry_run=dry_run)
    if dry_run:
        return result
    reasons = {v.filename: f"{GC_REASON_PREFIX} keep-score {v.score:.3f}" for v in plan.victims}
    result.archived = store.delete_many(reasons)
    for gone in reasons.keys() - {a.filename for a in result.archived}:
        log.info("gc: %s was already gone", gone)
    return result


def maybe_auto_gc(store: MemoryStore, config: Config | None = None, clock: Clock | None = None) -> list[ArchivedMemory]:
    """At session start: archive low scorers if the index nears its limits; never raises.

    Returns what was archived; show `gc_message(archived)` to the user when non-empty.
    Cheap when nothing is near a limit (MEMORY.md is read and files are counted, not opened),
    so it may also run after extraction saved memories.
    """
    settings = ForgetSettings.from_config(config)
    if not settings.auto_gc or (config is not None and not config.auto_memory):
        return []
    try:
        if not pressure(index_size(store), settings):
            return []
        return gc(store, settings, clock, stale=False).archived
    except (MemoryStoreError, LockTimeout, OSError) as exc:  # a read-only or full folder
        store.tell(f"Automatic memory gc skipped ({os_error_text(exc)}); nothing was archived.")
        return []


def gc_message(archived: list[ArchivedMemory], *, dry_run: bool = False) -> str:
    """One line telling the user what was (or would be) archived and how to undo it."""
    if not archived:
        return "Nothing to archive." if not dry_run else "gc would archive nothing."
    names = [a.filename for a in archived]
    shown = ", ".join(names[:MESSAGE_NAMES])
    if len(names) > MESSAGE_NAMES:
        shown += f" and {len(names) - MESSAGE_NAMES} more"
    verb = "Would archive" if dry_run else "Archived"
    noun = "memory" if len(names) == 1 else "memories"
    return (
        f"{verb} {len(names)} little-used {noun} to {ARCHIVE_DIR}/: {shown} "
        f"(recall still finds {'it' if len(names) == 1 else 'them'}; "
        "claude-mini memory restore NAME brings one back)."
    )


# --- likely duplicates -----------------------------------------------------------------
def likely_duplicates(
    store: MemoryStore,
    threshold: float = DUPLICATE_THRESHOLD,
) -> list[tuple[str, str, float]]:
    """Pairs of memories whose TF-IDF vectors (name, description, first lines) are close.

    (a, b, cosine) with a < b, most similar first. Input for /dream and for people. A memory
    superseded by a live one is history, not a duplicate of its successor: it is left out.
    """
    return similar_pairs(live_documents(store), threshold)


def live_documents(store: MemoryStore) -> list[Candidate]:
    """The live memories as documents for the duplicate detection, superseded ones left out."""
    docs = []
    records = store.list()
    superseded, _ = record_links(records)  # a correction and what it replaced are no duplicates
    for record in records:
        if record.filename in superseded:
            continue
        text, _ = read_text_head(record.path, HEAD_READ_BYTES)
        if text is not None:
            docs.append(candidate_from_text(record.filename, text, record.mtime))
    return docs


def similar_pairs(
    docs: list[Candidate],
    threshold: float = DUPLICATE_THRESHOLD,
) -> list[tuple[str, str, float]]:
    """(a, b, cosine) of the documents whose TF-IDF vectors are at least `threshold` alike,
    a < b, most similar first: doctor's duplicate detection, also `memory import`'s."""
    postings: dict[str, list[str]] = {}
    for d in docs:
        for term in d.terms:
            postings.setdefault(term, []).append(d.filename)
    idf = {t: math.log(1.0 + (len(docs) - len(p) + 0.5) / (len(p) + 0.5)) for t, p in postings.items()}
    vectors = {d.filename: _tfidf(d.terms, idf) for d in docs}
    dots: dict[tuple[str, str], float] = {}
    for term, posting in postings.items():
        if len(posting) < 2:
            continue
        names = sorted(posting)
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                dots[(a, b)] = dots.get((a, b), 0.0) + vectors[a][term] * vectors[b][term]
    pairs = [(a, b, round(dot, 3)) for (a, b), dot in dots.items() if dot >= threshold]
    pairs.sort(key=lambda p: (-p[2], p[0], p[1]))
    return pairs


def _tfidf(terms: dict[str, float], idf: dict[str, float]) -> dict[str, float]:
    """A unit-length TF-IDF vector with sublinear term frequency."""
    weights = {t: (1.0 + math.log(tf)) * idf[t] for t, tf in terms.items() if tf > 0}
    norm = math.sqrt(sum(w * w for w in weights.values())) or 1.0
    return {t: w / norm for t, w in weights.items()}


def duplicate_groups(pairs: list[tuple[str, str, float]]) -> list[tuple[list[str], float]]:
    """Pairs joined into groups of look-alikes (a, b, c...), with each group's best score."""
    parent: dict[str, str] = {}

    def root(x: str) -> str:
        while parent.setdefault(x, x) != x:
            x = parent[x]
        return x

    for a, b, _ in pairs:
        parent[root(a)] = root(b)
    groups: dict[str, list[str]] = {}
    for name in list(parent):
        groups.setdefault(root(name), []).append(name)
    best: dict[str, float] = {}
    for a, _, score in pairs:
        best[root(a)] = max(best.get(root(a), 0.0), score)
    out = [(sorted(files), best[key]) for key, files in groups.items()]
    out.sort(key=lambda g: (-g[1], g[0]))
    return out


def duplicate_findings(store: MemoryStore, threshold: float = DUPLICATE_THRESHOLD) -> list[Finding]:
    """Likely duplicates as doctor findings, one per group (not fixable mechanically: /dream)."""
    findings = []
    for files, score in duplicate_groups(likely_duplicates(store, threshold)):
        others = ", ".join(files[1:])
        findings.append(
            Finding(
                "likely_duplicate",
                files[0],
                f"looks like {others} (up to {round(score * 100)}% similar); "
                "merge them (/dream) or make their descriptions say how they differ",
            )
        )
    return findings


# --- secrets in the archive ------------------------------------------------------------
# Forgetting archives, so a memory that held a secret would keep it in archive/. These let
# `memory forget --purge` delete such copies for good (the secret guard keeps new ones out).
ARCHIVE_SCAN_BYTES = 1024 * 1024


@dataclass(frozen=True)
class ArchivedSecret:
    """An archived copy of a memory that holds likely secrets (`file` is relative to archive/)."""

    file: str
    findings: list[SecretFinding]


def archived_copies(store: MemoryStore, original: str) -> list[str]:
    """The archived files of the memory once named `original` (archive/ARCHIVE.md, or bare)."""
    files = [e.file for e in archived_entries(store) if original in (e.original, e.file)]
    if original not in files and bare_entry(store, original) is not None:
        files.append(original)
    return files


def secrets_in(path: Path) -> list[SecretFinding]:
    """The likely secrets in one file (its first MiB); none when it cannot be read as text."""
    text, _ = read_text_head(path, ARCHIVE_SCAN_BYTES)
    return find_secrets(text) if text is not None else []


def archived_secrets(store: MemoryStore, original: str) -> list[ArchivedSecret]:
    """The archived copies of `original` that hold likely secrets."""
    found = [ArchivedSecret(f, secrets_in(store.archive_dir / f)) for f in archived_copies(store, original)]
    return [s for s in found if s.findings]


def purge_archived(store: MemoryStore, files: list[str]) -> list[str]:
    """Delete archived files for good and drop their ARCHIVE.md lines; the files deleted."""
    deleted = []
    for file in dict.fromkeys(files):
        path = store.archive_dir / file
        if not plain_relative(file) or path == store.archive_index_path:
            continue
        path.unlink(missing_ok=True)
        store.remove_archive_entry(file)
        deleted.append(file)
    if deleted:  # recall's on-disk index keeps the head of every file: it goes too (rebuilt later)
        for folder in (store.root, store.archive_dir):
            with contextlib.suppress(OSError):
                delete_index_cache(paths.recall_cache_dir(), folder)
    return deleted
