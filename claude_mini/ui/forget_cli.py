"""`claude-mini memory list --scores`, `memory gc [--dry-run]`, `memory restore NAME`.

Actions are plain functions returning lines (or data for `--json`); the
typer commands at the bottom only parse arguments and print. Mount them on the
`memory` group:

    from claude_mini.ui import forget_cli
    memory_app.command("gc")(forget_cli.gc_command)
    memory_app.command("restore")(forget_cli.restore_command)
    # and in `memory list`: if scores: forget_cli.scores_command(as_json); return

Nothing here calls a model or imports the anthropic SDK.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from dataclasses import asdict
from typing import Annotated, Any

import typer

from claude_mini.memory.forget import (
    ForgetSettings,
    describe_score,
    gc,
    gc_message,
    index_size,
    keep_scores,
    pressure,
    restore,
)
from claude_mini.memory.store import (
    INDEX_MAX_BYTES,
    INDEX_MAX_LINES,
    ArchivedMemory,
    MemoryStore,
    MemoryStoreError,
)

Clock = Callable[[], float]


# --- actions -------------------------------------------------------------------------------
def scores_data(store: MemoryStore, config: Any = None, now: float | None = None) -> dict[str, Any]:
    """Every memory's keep-score, highest first, with the index size (for --json)."""
    settings = ForgetSettings.from_config(config)
    now = time.time() if now is None else now
    scores = keep_scores(store, now, settings)
    size = index_size(store)
    return {
        "memory_dir": str(store.root),
        "half_life_days": settings.half_life_days,
        "index": {"lines": size.lines, "bytes": size.bytes, "files": size.files,
                  "max_lines": INDEX_MAX_LINES, "max_bytes": INDEX_MAX_BYTES,
                  "max_files": settings.max_files},
        "memories": [{"file": s.filename, "type": s.type, "score": round(s.score, 4),
                      "uses": s.count, "last_used": s.last_used, "protected": s.protected,
                      "summary": describe_score(s, now)} for s in reversed(scores)],
    }


def scores_lines(data: dict[str, Any]) -> list[str]:
    """`scores_data` as text: one memory per line, the ones gc would archive first at the bottom."""
    idx = data["index"]
    lines = [f"Keep-scores in {data['memory_dir']} (half-life {data['half_life_days']:g} days; "
             f"MEMORY.md {idx['lines']}/{idx['max_lines']} lines, "
             f"{idx['bytes']:,}/{idx['max_bytes']:,} bytes; {idx['files']}/{idx['max_files']} files)"]
    for m in data["memories"]:
        lines.append(f"  {m['summary']}  {m['type'] or '?':<9} {m['file']}")
    if not data["memories"]:
        lines.append("  (no memories yet)")
    return lines


def gc_data(store: MemoryStore, config: Any = None, *, dry_run: bool = False,
            clock: Clock | None = None) -> dict[str, Any]:
    """Run (or plan) gc; what it archived or would archive, and why (for --json)."""
    settings = ForgetSettings.from_config(config)
    result = gc(store, settings, clock or time.time, dry_run=dry_run)
    plan = result.plan
    chosen = [{"file": v.filename, "score": round(v.score, 4), "uses": v.count}
              for v in plan.victims]
    return {
        "dry_run": dry_run,
        "reasons": plan.reasons,
        "archived": [] if dry_run else [
            {"file": a.filename, "to": a.archived_path.relative_to(store.root).as_posix()}
            for a in result.archived],
        "chosen": chosen,
        "before": asdict(plan.before), "after": asdict(plan.after),
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


# --- typer commands ------------------------------------------------------------------------
def _emit(action: Callable[[], list[str]]) -> None:
    try:
        lines = action()
    except MemoryStoreError as exc:
        sys.stderr.write(f"claude-mini memory: {exc}\n")
        raise typer.Exit(1) from None
    for line in lines:
        print(line)


def _context() -> tuple[MemoryStore, Any]:
    from claude_mini.ui.memory_cli import MemoryContext

    mc = MemoryContext.for_cwd()
    return mc.store, mc.config


def scores_command(
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Keep-scores of every memory: recency of use with a half-life, plus a bonus for use count."""
    store, config = _context()
    data = scores_data(store, config)
    _emit(lambda: [json.dumps(data, indent=2)] if as_json else scores_lines(data))


def gc_command(
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Only say what would be archived.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Archive the least-used memories (never deleted) when the index nears its limits, and stale ones."""
    store, config = _context()

    def action() -> list[str]:
        data = gc_data(store, config, dry_run=dry_run)
        return [json.dumps(data, indent=2)] if as_json else gc_lines(data)

    _emit(action)


def restore_command(
    name: Annotated[str, typer.Argument(help="Archived filename, old filename or title; "
                                            "a merged memory's name undoes the merge.")],
) -> None:
    """Bring a memory back from archive/ (a taken name keeps both under distinct names)."""
    store, _ = _context()
    _emit(lambda: restore_lines(store, name))
