"""How a `claude-mini memory ...` action reaches the terminal: its lines, or one line and an exit status.

memory_cli and the command groups it mounts (team_cli) print through `run_action`; it lives apart
from memory_cli so that the mounted groups need not import the module that mounts them.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import typer

from claude_mini.base.fileutil import os_error_text
from claude_mini.base.text import visible_controls
from claude_mini.commands.memory import MemoryCommandError
from claude_mini.memory.store import MemoryStoreError


def run_action(action: Callable[[], list[str] | None]) -> None:
    """Print an action's lines; a MemoryCommandError becomes one line on stderr and its exit code."""
    try:
        lines = action()
    except MemoryCommandError as exc:
        sys.stderr.write(visible_controls(f"claude-mini memory: {exc}") + "\n")
        raise typer.Exit(exc.code) from None
    except MemoryStoreError as exc:
        sys.stderr.write(visible_controls(f"claude-mini memory: {exc}") + "\n")
        raise typer.Exit(1) from None
    except OSError as exc:  # a read-only or full memory folder, a lock held too long
        sys.stderr.write(
            visible_controls(f"claude-mini memory: could not change the memory folder ({os_error_text(exc)})") + "\n"
        )
        raise typer.Exit(1) from None
    for line in lines or []:
        print(visible_controls(line))  # memories are model-written: no escape reaches the terminal
