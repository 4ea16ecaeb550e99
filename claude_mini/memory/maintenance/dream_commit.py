"""/dream's commit: what the fork staged is checked (frontmatter, names, secrets), then goes live in
one step: originals archived with a pointer to what replaced them, provenance stamped, usage
merged, MEMORY.md rewritten."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from claude_mini.base.fileutil import atomic_write
from claude_mini.memory.store import (
    ARCHIVE_DIR,
    INDEX_FILENAME,
    LOGS_DIR,
    ArchivedMemory,
    MemoryRecord,
    MemoryStore,
    UsageEntry,
    dump_frontmatter,
    epoch_of,
    index_line,
    iso_utc,
    normalise_target,
    parse_memory_text,
)
from claude_mini.memory.store.keep import last_written
from claude_mini.memory.store.memory_store import relative_name

if TYPE_CHECKING:
    pass


DREAM_DIR = ".dream"  # hidden: recall and list() never see it


@dataclass
class DreamReport:
    """What a dream did, for the user: the fork's own report plus the harness's changes."""

    ok: bool
    summary: str = ""  # the fork's final text
    written: list[str] = field(default_factory=list)  # live files created or rewritten
    archived: list[ArchivedMemory] = field(default_factory=list)
    logs: list[str] = field(default_factory=list)  # daily logs consumed
    skipped: list[str] = field(default_factory=list)  # staged files refused, and why
    error: str | None = None

    @property
    def changed(self) -> bool:
        """Whether any live file changed (the system prompt may need a rebuild)."""
        return bool(self.written or self.archived)

    def message(self) -> str:
        """A short report: the fork's summary, then one line of what the harness did."""
        if not self.ok and not self.changed:
            return f"Dream failed: {self.error}. Every memory was left as it was."
        if not self.ok:
            return f"Dream failed: {self.error}."
        done = (
            f"Dream done: {len(self.written)} written, {len(self.archived)} archived "
            f"(claude-mini memory restore NAME undoes any of it)"
        )
        if self.logs:
            done += f", {len(self.logs)} daily log(s) distilled"
        lines = [self.summary.strip(), done + "."] if self.summary.strip() else [done + "."]
        lines += [f"Skipped {s}" for s in self.skipped]
        return "\n".join(lines)


@dataclass
class Staged:
    """One staged memory the commit will make live."""

    path: Path  # in the staging folder
    filename: str  # its live name
    frontmatter: dict[str, Any]
    body: str
    replaces: list[str]  # live memories it supersedes (its own name if it rewrites one)


def check_staged(store: MemoryStore, staging: Path, skipped: list[str]) -> list[Staged]:
    """The staged files that are valid memories; the others are reported in `skipped`."""
    out = []
    for path in sorted(p for p in staging.rglob("*") if p.is_file() and not p.is_symlink()):
        rel = path.relative_to(staging).as_posix()
        problem = _name_problem(rel)
        staged = None if problem else _parse_staged(store, path, rel, skipped)
        if problem:
            skipped.append(f"{rel}: {problem}")
        elif staged is not None:
            out.append(staged)
    return out


def _name_problem(rel: str) -> str | None:
    parts = rel.split("/")
    if not rel.endswith(".md") or any(p.startswith(".") for p in parts):
        return "not a memory filename (a visible .md file is needed)"
    if rel == INDEX_FILENAME or parts[0] in (ARCHIVE_DIR, LOGS_DIR, DREAM_DIR):
        return f"{INDEX_FILENAME}, {ARCHIVE_DIR}/ and {LOGS_DIR}/ are maintained by the harness"
    return None


def _parse_staged(store: MemoryStore, path: Path, rel: str, skipped: list[str]) -> Staged | None:
    try:
        text = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        skipped.append(f"{rel}: unreadable ({exc})")
        return None
    parsed = parse_memory_text(text)
    if not parsed.ok:
        skipped.append(f"{rel}: {parsed.problem}")
        return None
    fm = dict(parsed.frontmatter)
    raw = fm.pop("replaces", None)
    items = raw if isinstance(raw, list) else [raw] if isinstance(raw, str) else []
    replaces = []
    for item in (normalise_target(str(i)) for i in items if str(i).strip()):
        if store.exists(item) and item not in replaces:
            replaces.append(item)
        else:
            skipped.append(f"{rel}: replaces {item}, which is not a live memory (ignored)")
    if store.exists(rel) and rel not in replaces:
        replaces.insert(0, rel)  # writing a live name rewrites that memory
    return Staged(path, rel, fm, parsed.body, replaces)


def commit(
    store: MemoryStore,
    staged: list[Staged],
    now: float,
    report: DreamReport,
    seen: dict[str, tuple[float, int]] | None = None,
) -> None:
    """Make the staged memories live, then archive what they replace (new first, old last).

    `seen` holds (mtime, size) of the memories as the fork was shown them: one
    that changed (or appeared) since is newer than the dream, so it is kept as
    it is and not replaced.
    """
    usage = store.usage()
    originals = {r.filename: r for r in store.list()}
    staged = _drop_stale(staged, originals, seen, report.skipped)
    archived_as: dict[str, str] = {}  # original filename -> path under the memory folder
    for s in staged:
        _stamp(s, [originals[o] for o in s.replaces if o in originals], now)
        if s.filename in s.replaces:
            copy = store.archive_copy(s.filename, reason="dream: rewritten", successor=s.filename)
            archived_as[s.filename] = relative_name(store, copy.archived_path)
            report.archived.append(copy)
        _go_live(store, s)
        report.written.append(s.filename)
    for s in staged:
        for original in s.replaces:
            if original in archived_as or not store.exists(original):
                continue
            gone = store.delete(original, reason=f"dream: merged into {s.filename}", successor=s.filename)
            archived_as[original] = relative_name(store, gone.archived_path)
            report.archived.append(gone)
    for s in staged:
        _point_to_archive(store, s, archived_as)
        _merge_usage(store, s, usage)


def _drop_stale(
    staged: list[Staged],
    originals: dict[str, MemoryRecord],
    seen: dict[str, tuple[float, int]] | None,
    skipped: list[str],
) -> list[Staged]:
    """Keep memories written by someone else during the dream: never replace or archive them."""
    if seen is None:
        return staged
    newer = {f for f, r in originals.items() if seen.get(f) != (r.mtime, r.size)}
    out = []
    for s in staged:
        if s.filename in newer:
            skipped.append(f"{s.filename}: it changed while dreaming; the newer version stays")
            continue
        for original in [o for o in s.replaces if o in newer]:
            skipped.append(f"{original}: it changed while dreaming, so it stays next to {s.filename}")
            s.replaces.remove(original)
        out.append(s)
    return out


def _stamp(s: Staged, originals: list[MemoryRecord], now: float) -> None:
    """Frontmatter for the live file: replaces, and times inherited from the originals.

    A merge is not a use: `updated` is the newest of the originals' (now for a new
    memory), so consolidating stale memories does not make them look fresh to gc.
    """
    if s.replaces:
        s.frontmatter["replaces"] = list(s.replaces)
    if any(r.pinned for r in originals):
        s.frontmatter["pinned"] = True  # a merge never unpins
    created = [c for c in (_fm_time(r, "created") for r in originals) if c is not None]
    s.frontmatter["created"] = iso_utc(min(created)) if created else iso_utc(now)
    s.frontmatter["updated"] = iso_utc(max(last_written(r) for r in originals)) if originals else iso_utc(now)


def _fm_time(record: MemoryRecord, key: str) -> float | None:
    return epoch_of(record.frontmatter.get(key))


def _go_live(store: MemoryStore, s: Staged) -> None:
    dest = store.root / s.filename
    atomic_write(s.path, _render(s.frontmatter, s.body))
    dest.parent.mkdir(parents=True, exist_ok=True)
    os.replace(s.path, dest)  # same filesystem: atomic, readers see old or new
    line = index_line(s.filename, str(s.frontmatter["name"]), str(s.frontmatter["description"]))
    store.update_index(add_or_replace={s.filename: line})


def _render(fm: dict[str, Any], body: str) -> str:
    return f"---\n{dump_frontmatter(fm)}---\n\n{body.strip()}\n"


def _point_to_archive(store: MemoryStore, s: Staged, archived_as: dict[str, str]) -> None:
    """Rewrite `replaces:` with the archived copies' paths (what restore follows)."""
    if not s.replaces:
        return
    s.frontmatter["replaces"] = [archived_as.get(o, o) for o in s.replaces]
    atomic_write(store.root / s.filename, _render(s.frontmatter, s.body))


def _merge_usage(store: MemoryStore, s: Staged, before: dict[str, UsageEntry]) -> None:
    """A successor inherits its originals' recall uses (summed) and latest use."""
    entries = [before[o] for o in dict.fromkeys([*s.replaces, s.filename]) if o in before]
    if not entries:
        return
    merged: UsageEntry = {"count": sum(e["count"] for e in entries), "last_used": max(e["last_used"] for e in entries)}
    store.edit_usage(lambda data: data.__setitem__(s.filename, merged))
