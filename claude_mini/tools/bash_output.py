"""BashOutput: what a background shell (Bash with run_in_background) printed since the last read."""

from __future__ import annotations

import re
from typing import Any

from claude_mini.tools import ToolContext, ToolError, ToolResult, opt_str_arg, str_arg
from claude_mini.tools.background import BackgroundShell, BackgroundShells, UnknownShell

DESCRIPTION = """\
Returns the new output of a background shell (one started by Bash with run_in_background: true) \
and whether it still runs.

- bash_id is the id Bash returned when it started the shell (bash_1, bash_2, ...).
- Each call returns only what the shell printed since the previous call for that id, stdout and \
stderr together; an empty result means nothing new yet.
- filter (optional) is a regular expression: only lines matching it are returned. Lines that do \
not match are consumed all the same and cannot be read again.
- The result also says whether the shell is running, completed or failed (with its exit code) or \
was killed. KillShell ends one that should not run any more."""


class BashOutputTool:
    """The BashOutput tool, over the session's BackgroundShells (ToolContext.shells)."""

    name = "BashOutput"
    description = DESCRIPTION
    read_only = True

    def __init__(self) -> None:
        self.input_schema: dict[str, Any] = {
            "type": "object",
            "properties": {
                "bash_id": {"type": "string", "description": "The id of the background shell (from Bash)"},
                "filter": {
                    "type": "string",
                    "description": "A regular expression: only matching lines are returned; the others are consumed",
                },
            },
            "required": ["bash_id"],
            "additionalProperties": False,
        }

    def validate(self, input: dict[str, Any], ctx: ToolContext) -> None:
        """An unknown id or a broken filter is known before anything is read."""
        _shell_of(ctx, str_arg(input, "bash_id"))
        _pattern(input)

    async def call(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """The new output and the state of the shell."""
        shell = _shell_of(ctx, str_arg(input, "bash_id"))
        pattern = _pattern(input)
        text, dropped = shell.read_new(pattern)
        if not shell.running:
            shell.told = True  # the model knows now: no reminder needed
        lines = [f"Shell {shell.id}: {shell.state()} · {shell.command}"]
        lines += [note for note in (shell.note, shell.spool.problem) if note]
        if dropped:
            lines.append(f"[{dropped:,} bytes of older output were dropped unread: the disk cap keeps the newest]")
        what = "matching lines" if pattern is not None else "output"
        lines.append(f"New {what}:\n{text}" if text else f"(no new {what})")
        meta = {"bash_id": shell.id, "status": shell.status, "exit_code": shell.exit_code}
        return ToolResult("\n".join(lines), metadata=meta)


def shells_of(ctx: ToolContext) -> BackgroundShells:
    """The session's background shells; a ToolError where there are none (a bare context)."""
    if ctx.shells is None:
        raise ToolError("Background shells are not available here.")
    return ctx.shells


def _shell_of(ctx: ToolContext, shell_id: str) -> BackgroundShell:
    try:
        return shells_of(ctx).get(shell_id)
    except UnknownShell as exc:
        raise ToolError(str(exc)) from None


def _pattern(input: dict[str, Any]) -> re.Pattern[str] | None:
    text = opt_str_arg(input, "filter")
    if text is None:
        return None
    try:
        return re.compile(text)
    except re.error as exc:
        raise ToolError(f"filter is not a valid regular expression ({exc}); nothing was read.") from None
