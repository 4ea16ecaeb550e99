"""`/sandbox`: what the Bash sandbox enforces in this session, what is missing and why.

The same report as `claude-mini sandbox status` (commands/sandbox.py), for the session's own sandbox.
"""

from __future__ import annotations

from claude_mini.ui.commands import CommandContext, command, print_lines


@command("sandbox", help="Show what the Bash sandbox (bubblewrap) enforces: files, network, what is not covered.")
def show_sandbox(ctx: CommandContext) -> None:
    """Print the session sandbox's status lines."""
    from claude_mini.commands.sandbox import session_lines

    print_lines(ctx, session_lines(ctx.rt.sandbox))
