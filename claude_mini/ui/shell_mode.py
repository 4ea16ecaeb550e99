"""`!` shell mode: a prompt that starts with `!` runs its command now, with no model request.

The line is the Bash tool's call in all but who made it: the user's PreToolUse hooks, the
permission rules (a deny rule refuses it, an ask rule asks) and the sandbox apply, and a `cd`
moves the session as the model's own `cd` would. What it printed is drawn as a tool call is
(the exit code of a failure first, long output cut, Ctrl-O shows it whole), and the command with
its output joins the conversation as a user message: the next request carries it, merged with
the next prompt (two user messages in a row are one, session.py), and the model is told it is
context, not a question. As Claude Code's bash mode, the exchange is tagged `<bash-input>` and
`<bash-stdout>`; our Bash tool interleaves stdout and stderr, so both are in the second.
"""

from __future__ import annotations

import itertools
import re
from typing import TYPE_CHECKING

from claude_mini.llm.messages import Message, TextBlock, ToolUseBlock
from claude_mini.tools.base import ToolResult

if TYPE_CHECKING:
    from claude_mini.agent.loop import Agent

PREFIX = "!"
NOTE = (
    "The user ran the command below in their terminal with claude-mini's `!` shell mode; its output "
    "follows. It is context for what comes next: do not answer it unless the user asks about it."
)
EXCHANGE = re.compile(r"<bash-input>(.*?)</bash-input>\s*<bash-stdout>(.*?)</bash-stdout>", re.DOTALL)
_ids = itertools.count(1)


def shell_command(text: str) -> str | None:
    """The command of a `!` prompt (`""` for a bare `!`); None for any other prompt."""
    stripped = text.strip()
    return stripped[len(PREFIX) :].strip() if stripped.startswith(PREFIX) else None


def exchange_text(command: str, result: ToolResult) -> str:
    """The user message a `!` line adds to the conversation: the note, the command, its output."""
    return f"{NOTE}\n<bash-input>{command}</bash-input>\n<bash-stdout>{result.content}</bash-stdout>"


def parse_exchange(text: str) -> tuple[str, str] | None:
    """The command and output of a `!` exchange message (for the transcript view); None for other text."""
    match = EXCHANGE.search(text)
    return (match.group(1), match.group(2)) if match and text.startswith(NOTE) else None


async def run_shell_line(agent: Agent, command: str) -> tuple[ToolUseBlock, ToolResult]:
    """Run `command` as the Bash tool would (hooks, rules, the question where one is due, the
    sandbox) and, when it ran, record it with its output in the conversation; the call and its
    result (or why it did not run)."""
    from claude_mini.agent.loop import run_tool  # startup: /resume's redraw reads exchanges without the loop

    call, decision = await agent.vet(ToolUseBlock(f"user-shell-{next(_ids)}", "Bash", {"command": command}))
    if isinstance(decision, ToolResult):
        return call, decision
    refusal = await agent.permit(call, decision)
    if refusal is not None:
        return call, refusal
    bash = agent.tools.get("Bash")
    if bash is None:
        return call, ToolResult("This session has no Bash tool, so `!` lines cannot run.", is_error=True)
    result = await run_tool(bash, call, agent.ctx)
    agent.session.add_message(Message("user", [TextBlock(exchange_text(command, result))]))
    return call, result
