"""`!` shell mode: a prompt that starts with `!` runs its command now, with no model request.

The line is the Bash tool's call in all but who made it: the user's PreToolUse hooks, the
permission rules (a deny rule refuses it, an ask rule asks) and the sandbox apply, and a `cd`
moves the session as the model's own `cd` would. What it printed is drawn as a tool call is
(the exit code of a failure first, long output cut, Ctrl-O shows it whole), and the command with
its output joins the conversation as a user message: the next request carries it, merged with
the next prompt (two user messages in a row are one, session.py), and the model is told it is
context, not a question. The blocks have the shapes of Claude Code's bash mode, so tools that read
its transcripts read ours: a `<local-command-caveat>`, then `<bash-input>command</bash-input>`,
then `<bash-stdout>…</bash-stdout><bash-stderr></bash-stderr>` (our Bash tool interleaves the
two streams, so all of the output is in the first).
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
INPUT = re.compile(r"<bash-input>(.*)</bash-input>", re.DOTALL)
OUTPUT = re.compile(r"<bash-stdout>(.*)</bash-stdout><bash-stderr>(.*)</bash-stderr>", re.DOTALL)
CAVEAT = "<local-command-caveat>"
_ids = itertools.count(1)


def shell_command(text: str) -> str | None:
    """The command of a `!` prompt (`""` for a bare `!`); None for any other prompt."""
    stripped = text.strip()
    return stripped[len(PREFIX) :].strip() if stripped.startswith(PREFIX) else None


def exchange_blocks(command: str, result: ToolResult) -> list[TextBlock]:
    """The user message's blocks a `!` line adds to the conversation: the note, the command, its output."""
    return [
        TextBlock(f"{CAVEAT}{NOTE}</local-command-caveat>"),
        TextBlock(f"<bash-input>{command}</bash-input>"),
        TextBlock(f"<bash-stdout>{result.content}</bash-stdout><bash-stderr></bash-stderr>"),
    ]


def shell_part(text: str) -> tuple[str, str] | None:
    """What a block of a `!` exchange is: ("input", command), ("output", text) or ("note", ""); None
    for any other text (for the transcript view and /resume's redraw)."""
    if text.startswith(CAVEAT):
        return "note", ""
    if match := INPUT.fullmatch(text):
        return "input", match.group(1)
    if match := OUTPUT.fullmatch(text):
        return "output", match.group(1) + match.group(2)
    return None


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
    agent.session.add_message(Message("user", [*exchange_blocks(command, result)]))
    return call, result
