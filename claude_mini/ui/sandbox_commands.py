"""`/sandbox`: what the Bash sandbox enforces in this session, what is missing and why.

The same report as `claude-mini sandbox status` (sandbox/status.py), for the session's own sandbox.
"""

from __future__ import annotations

from claude_mini.ui.commands import CommandContext, command, print_lines


@command("sandbox", help="Show what the Bash sandbox (bubblewrap) enforces: files, network, what is not covered.")
def show_sandbox(ctx: CommandContext) -> None:
    """Print the session sandbox's status lines."""
    from claude_mini.sandbox.status import status_lines

    box = ctx.rt.sandbox
    if box is None:
        print_lines(
            ctx,
            [
                "Sandbox: off (sandbox.enabled is false). Bash runs as you, checked by the "
                "permission rules and the command-line analysis only."
            ],
        )
        return
    print_lines(ctx, status_lines(box))
