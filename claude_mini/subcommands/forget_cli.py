"""`claude-mini memory list --scores`, `memory gc [--dry-run]`, `memory restore NAME`, and
what `memory forget NAME [--purge]` says and does about secrets left in archive/.

The actions are commands/forget.py's (the REPL's /memory runs the same ones); the typer
commands here parse arguments, ask on the terminal and print. Mount them on the `memory` group:

    from claude_mini.subcommands import forget_cli
    memory_app.command("gc")(forget_cli.gc_command)
    memory_app.command("restore")(forget_cli.restore_command)
    # and in `memory list`: if scores: forget_cli.scores_command(as_json); return

Nothing here calls a model or imports the anthropic SDK.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Annotated, Any

import typer

from claude_mini.base.text import visible_controls
from claude_mini.commands.forget import (
    Ask,
    gc_data,
    gc_lines,
    restore_lines,
    scores_data,
    scores_lines,
)
from claude_mini.memory.store import (
    MemoryStore,
    MemoryStoreError,
)


def ask_on_terminal(question: str) -> bool:
    """A y/N question on the terminal; False (no) at end of input."""
    try:
        return input(question).strip().lower() in ("y", "yes")
    except EOFError:
        return False


def terminal_ask() -> Ask | None:
    """`ask_on_terminal` when stdin and stdout are a terminal, else None (nobody to ask)."""
    return ask_on_terminal if sys.stdin.isatty() and sys.stdout.isatty() else None


# --- typer commands ------------------------------------------------------------------------
def _emit(action: Callable[[], list[str]]) -> None:
    try:
        lines = action()
    except MemoryStoreError as exc:
        sys.stderr.write(visible_controls(f"claude-mini memory: {exc}") + "\n")
        raise typer.Exit(1) from None
    for line in lines:
        print(visible_controls(line))


def _context() -> tuple[MemoryStore, Any]:
    from claude_mini.commands.memory import MemoryContext

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
    name: Annotated[
        str, typer.Argument(help="Archived filename, old filename or title; a merged memory's name undoes the merge.")
    ],
) -> None:
    """Bring a memory back from archive/ (a taken name keeps both under distinct names)."""
    store, _ = _context()
    _emit(lambda: restore_lines(store, name))
