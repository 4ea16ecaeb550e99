"""`/hooks`: every hook of the settings files, what runs on which event, what does not and why.

The same listing as `claude-mini hooks list` (commands/hooks.py), for the
session's settings as they are now (after a "yes" to the trust question too).
"""

from __future__ import annotations

from claude_mini.ui.commands import CommandContext, command, print_lines


@command("hooks", help="List the hooks from the settings files: what runs on which event, what does not and why.")
def show_hooks(ctx: CommandContext) -> None:
    """Print `hooks_report` for this session's config."""
    from claude_mini.commands.hooks import hooks_lines

    print_lines(ctx, hooks_lines(ctx.rt.config))
