"""/agents: the subagent types the Agent tool can start, and what is wrong with their files.

    /agents        every type: name, source, tools, model, memory, fork or own context, and
                   under it when to use it; then one line per bad file or clash
    /agents last   the last subagent's conversation: each message's text, one line per tool call

The lines come from claude_mini/commands/agents.py; this module parses the argument and prints.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from claude_mini.commands.agents import agents_table, last_run_lines, session_types
from claude_mini.ui.commands import CommandContext, command, print_lines
from claude_mini.ui.render import tool_label

if TYPE_CHECKING:
    from claude_mini.llm.messages import ToolUseBlock

USAGE = "Usage: /agents [last]: the subagent types, or the last subagent's conversation."


@command(
    "agents",
    help="Subagent types for the Agent tool (tools, model, memory) and bad agent files; "
    "/agents last: the last subagent's conversation.",
    usage="[last]",
)
def show_agents(ctx: CommandContext) -> None:
    """The types and problems, or with `last` the last child's conversation."""
    arg = ctx.args.strip().lower()
    if arg == "last":
        cwd = ctx.rt.config.cwd

        def label(call: ToolUseBlock) -> str:
            return tool_label(call, cwd)

        print_lines(ctx, last_run_lines(ctx.rt.subagents.runs if ctx.rt.subagents is not None else [], label))
    elif arg:
        print_lines(ctx, [USAGE])
    else:
        print_lines(ctx, agents_table(session_types(ctx.rt), width=ctx.console.width))
