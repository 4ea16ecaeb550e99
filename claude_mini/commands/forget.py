"""Forgetting, for `claude-mini memory` and /memory: `list --scores`, `gc [--dry-run]`, `restore NAME`,
and what `forget NAME [--purge]` says and does about secrets left in archive/.

Actions are plain functions returning lines (or data for `--json`); subcommands/forget_cli.py and
ui/memory_commands.py parse arguments and print. Nothing here calls a model or imports the anthropic SDK.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from claude_mini.config import Config
from claude_mini.config.memory_settings import ForgetSettings
from claude_mini.memory.maintenance.forget import (
    ArchivedSecret,
    archived_copies,
    archived_secrets,
    gc,
    gc_message,
    index_size,
    pressure,
    purge_archived,
)
from claude_mini.memory.secrets.scan import describe_findings
from claude_mini.memory.store import (
    ARCHIVE_DIR,
    INDEX_MAX_BYTES,
    INDEX_MAX_LINES,
    ArchivedMemory,
    MemoryNotFound,
    MemoryStore,
)
from claude_mini.memory.store.keep import describe_score, keep_scores
from claude_mini.memory.store.restore import find_archived, restore

Clock = Callable[[], float]
Ask = Callable[[str], bool]  # a yes/no question to the user; None where nobody can answer
FORGET_COMMAND = "claude-mini memory forget"


# --- actions -------------------------------------------------------------------------------
def scores_data(store: MemoryStore, config: Config | None = None, now: float | None = None) -> dict[str, Any]:
    """Every memory's keep-score, highest first, with the index size (for --json)."""
    settings = ForgetSettings.from_config(config)
    now = time.time() if now is None else now
    scores = keep_scores(store, now, settings)
    size = index_size(store)
    return {
        "memory_dir": str(store.root),
        "half_life_days": settings.half_life_days,
        "index": {
            "lines": size.lines,
            "bytes": size.bytes,
            "files": size.files,
            "max_lines": INDEX_MAX_LINES,
            "max_bytes": INDEX_MAX_BYTES,
            "max_files": settings.max_files,
        },
        "memories": [
            {
                "file": s.filename,
                "type": s.type,
                "score": round(s.score, 4),
                "uses": s.count,
                "last_used": s.last_used,
                "protected": s.protected,
                "summary": describe_score(s, now),
            }
            for s in reversed(scores)
        ],
    }


def scores_lines(data: dict[str, Any]) -> list[str]:
    """`scores_data` as text: one memory per line, the ones gc would archive first at the bottom."""
    idx = data["index"]
    lines = [
        f"Keep-scores in {data['memory_dir']} (half-life {data['half_life_days']:g} days; "
        f"MEMORY.md {idx['lines']}/{idx['max_lines']} lines, "
        f"{idx['bytes']:,}/{idx['max_bytes']:,} bytes; {idx['files']}/{idx['max_files']} files)"
    ]
    for m in data["memories"]:
        lines.append(f"  {m['summary']}  {m['type'] or '?':<9} {m['file']}")
    if not data["memories"]:
        lines.append("  (no memories yet)")
    return lines


def gc_data(
    store: MemoryStore, config: Config | None = None, *, dry_run: bool = False, clock: Clock | None = None
) -> dict[str, Any]:
    """Run (or plan) gc; what it archived or would archive, and why (for --json)."""
    settings = ForgetSettings.from_config(config)
    result = gc(store, settings, clock or time.time, dry_run=dry_run)
    plan = result.plan
    chosen = [{"file": v.filename, "score": round(v.score, 4), "uses": v.count} for v in plan.victims]
    return {
        "dry_run": dry_run,
        "reasons": plan.reasons,
        "archived": []
        if dry_run
        else [{"file": a.filename, "to": a.archived_path.relative_to(store.root).as_posix()} for a in result.archived],
        "chosen": chosen,
        "before": asdict(plan.before),
        "after": asdict(plan.after),
        "blocked": plan.blocked,
        "message": _gc_summary(result.archived, chosen, dry_run),
        "still_over": pressure(index_size(store), settings, 1.0) if not dry_run else [],
    }


def _gc_summary(archived: list[ArchivedMemory], chosen: list[dict[str, Any]], dry_run: bool) -> str:
    if not dry_run:
        return gc_message(archived)
    if not chosen:
        return gc_message([], dry_run=True)
    names = ", ".join(c["file"] for c in chosen)
    return f"Would archive {len(chosen)}: {names} (run without --dry-run to do it)."


def gc_lines(data: dict[str, Any]) -> list[str]:
    """`gc_data` as text: why, what, and what is still wrong."""
    lines = [f"Near a limit: {'; '.join(data['reasons'])}."] if data["reasons"] else []
    lines.append(data["message"])
    if data["blocked"]:
        lines.append(f"Note: {data['blocked']}.")
    return lines


def restore_lines(store: MemoryStore, name: str, clock: Clock | None = None) -> list[str]:
    """Bring an archived memory back (or undo a /dream merge); one line saying what happened."""
    return [restore(store, name, clock or time.time).message()]


@dataclass
class Forgotten:
    """What `memory forget` did, and the archived copies that still hold secrets (if any)."""

    lines: list[str]
    filename: str = ""
    leftovers: list[ArchivedSecret] = field(default_factory=list)

    def question(self) -> str:
        """The purge offer for an interactive run."""
        return f"{self.filename} held {_secrets_phrase(self.leftovers)}. Delete it from {ARCHIVE_DIR}/ for good too?"

    def hint(self, command: str) -> str:
        """What a run that cannot ask says instead."""
        where = ", ".join(f"{ARCHIVE_DIR}/{s.file}" for s in self.leftovers)
        return (
            f"Warning: {self.filename} held {_secrets_phrase(self.leftovers)}, kept in "
            f"{where}. `{command} {self.filename} --purge` deletes it for good."
        )


def forget_step(store: MemoryStore, name: str, *, purge: bool = False, command: str = FORGET_COMMAND) -> Forgotten:
    """Archive a memory, or with `purge` delete it (live or already archived) and its archived
    copies that hold secrets; a plain forget reports the archived copies that hold secrets."""
    try:
        archived = store.delete(name)
    except MemoryNotFound:
        if not purge:
            raise
        entry = find_archived(store, name)
        return Forgotten(purge_lines(store, entry.original, entry.file))
    if purge:
        rel = archived.archived_path.relative_to(store.archive_dir).as_posix()
        return Forgotten(purge_lines(store, archived.filename, rel))
    return Forgotten(
        [_archived_line(store, archived, command)], archived.filename, archived_secrets(store, archived.filename)
    )


def forget_lines(
    store: MemoryStore, name: str, *, purge: bool = False, ask: Ask | None = None, command: str = FORGET_COMMAND
) -> list[str]:
    """`forget_step`, then for a memory that held a secret: `ask` (interactive runs only) is
    offered the purge, and a run that cannot ask is told the `command NAME --purge` to use."""
    done = forget_step(store, name, purge=purge, command=command)
    if not done.leftovers:
        return done.lines
    if ask is not None and ask(done.question() + " [y/N] "):
        return [*done.lines, *purge_lines(store, done.filename, None)]
    return [*done.lines, done.hint(command)]


def _archived_line(store: MemoryStore, archived: ArchivedMemory, command: str) -> str:
    rel = archived.archived_path.relative_to(store.root)
    removed = "removed its line from MEMORY.md" if archived.index_line else "it had no index line"
    restore_cmd = command.replace(" forget", " restore")
    return f"Archived {archived.filename} to {rel} ({removed}). `{restore_cmd} {archived.filename}` brings it back."


def _secrets_phrase(found: list[ArchivedSecret]) -> str:
    return "; ".join(
        f"{describe_findings(s.findings)}" + (f" (in {ARCHIVE_DIR}/{s.file})" if len(found) > 1 else "") for s in found
    )


def purge_lines(store: MemoryStore, original: str, named: str | None) -> list[str]:
    """Delete the archived copies of `original` that hold secrets, and `named` (in archive/)."""
    files = [s.file for s in archived_secrets(store, original)]
    if named is not None:
        files.insert(0, named)
    if not files:
        copies = ", ".join(archived_copies(store, original)) or "none"
        return [
            f"No archived copy of {original} holds a secret (copies in {ARCHIVE_DIR}/: {copies}); nothing was deleted."
        ]
    deleted = purge_archived(store, files)
    return [
        f"Deleted {original} for good: {', '.join(f'{ARCHIVE_DIR}/{f}' for f in deleted)} "
        f"and their {ARCHIVE_DIR}/ARCHIVE.md lines (recall's index of the folder is rebuilt). "
        "Copies elsewhere (session transcripts, "
        "git history, backups) are not touched."
    ]
