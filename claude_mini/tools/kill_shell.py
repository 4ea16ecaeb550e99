"""KillShell: end a background shell (Bash with run_in_background) and everything it started."""

from __future__ import annotations

from typing import Any

from claude_mini.tools import ToolContext, ToolError, ToolResult, str_arg
from claude_mini.tools.background import UnknownShell
from claude_mini.tools.bash_output import shells_of

DESCRIPTION = """\
Ends a background shell (one started by Bash with run_in_background: true) and every process it \
started.

- shell_id is the id Bash returned (bash_1, bash_2, ...).
- Ending a shell that has already finished is not an error; the result says how it ended.
- Its output stays readable with BashOutput."""


class KillShellTool:
    """The KillShell tool, over the session's BackgroundShells (ToolContext.shells)."""

    name = "KillShell"
    description = DESCRIPTION
    read_only = False

    def __init__(self) -> None:
        self.input_schema: dict[str, Any] = {
            "type": "object",
            "properties": {"shell_id": {"type": "string", "description": "The id of the background shell to end"}},
            "required": ["shell_id"],
            "additionalProperties": False,
        }

    def validate(self, input: dict[str, Any], ctx: ToolContext) -> None:
        """An unknown id is known before anything is signalled."""
        try:
            shells_of(ctx).get(str_arg(input, "shell_id"))
        except UnknownShell as exc:
            raise ToolError(str(exc)) from None

    async def call(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Kill the shell's process group; say how it ended."""
        shell_id = str_arg(input, "shell_id")
        shells = shells_of(ctx)
        try:
            was_running = shells.get(shell_id).running
            shell = await shells.kill(shell_id)
        except UnknownShell as exc:
            raise ToolError(str(exc)) from None
        if was_running:
            text = f"Killed background shell {shell.id} ({shell.command})."
        else:
            text = f"Background shell {shell.id} had already ended: {shell.state()}. Nothing left running."
        return ToolResult(text, metadata={"bash_id": shell.id, "status": shell.status})
