"""How the command line says something on stderr: one `claude-mini: ...` line, made safe."""

from __future__ import annotations

import sys


def say(message: str) -> None:
    """One `claude-mini: ...` line on stderr, its control characters (newlines too) made visible.

    Warnings carry paths, setting values and import targets from the repository: an
    escape sequence in them must not reach the terminal, nor a newline fake a line.
    """
    from claude_mini.ui.safe_text import visible_controls

    line = visible_controls(message).replace("\n", "\\n")
    sys.stderr.write(f"claude-mini: {line}\n")
