"""The Agent tool: delegate a task to a subagent with its own context; get back its answer.

Its description lists the agent types (fixed per conversation, like the skill listing, so the
tool list stays one cached prefix for every request and fork; rebuilt at /clear).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from claude_mini.tools.base import ToolContext, ToolError, ToolResult

if TYPE_CHECKING:
    from claude_mini.subagents.lifecycle import SubagentPart
    from claude_mini.subagents.types import AgentTypes

GUIDE = """\
Start a subagent: another agent that does one task in its own context and returns its \
final answer as this call's result. Use it for work that would fill this conversation with \
material you will not need afterwards (searching many files, reading a subsystem, a long \
investigation), or for independent tasks: several Agent calls in one response run at the \
same time. Give it a complete, self-contained prompt (what to find or do, where, what to \
report back): it has not seen this conversation unless its type runs as a fork. Its tool \
calls are checked like yours. Do not use it for a single file read or search."""


def type_line(agent_type: Any) -> str:
    """`- Explore: ... (tools: Read, Grep, Glob, Bash; read-only)`."""
    if agent_type.fork:
        how = "all tools; a fork: it sees this conversation"
    else:
        how = f"tools: {', '.join(agent_type.tools)}" if agent_type.tools is not None else "all tools"
        how += "; read-only" if agent_type.read_only else ""
    return f"- {agent_type.name}: {' '.join(agent_type.description.split())} ({how})"


def describe(types: AgentTypes) -> str:
    return (
        GUIDE
        + "\n\nAgent types (`subagent_type`; general-purpose when omitted):\n"
        + "\n".join(type_line(t) for t in types.types)
    )


class AgentTool:
    """`Agent`: {description, prompt, subagent_type} -> the subagent's answer."""

    name = "Agent"
    read_only = True  # several Agent calls of one response run together; each child's calls are checked
    input_schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "description": {"type": "string", "description": "A short (3-5 words) label for the task."},
            "prompt": {"type": "string", "description": "The task, complete and self-contained."},
            "subagent_type": {"type": "string", "description": "One of the agent types listed above."},
        },
        "required": ["description", "prompt"],
        "additionalProperties": False,
    }

    def __init__(self, subagents: SubagentPart) -> None:
        self.subagents = subagents
        self.description = describe(subagents.types)

    def validate(self, input: dict[str, Any], ctx: ToolContext) -> None:
        self.subagents.type_for(input.get("subagent_type"))

    async def call(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        prompt, label = input.get("prompt"), input.get("description") or ""
        if not isinstance(prompt, str) or not prompt.strip():
            raise ToolError("`prompt` must say what the subagent is to do.")
        if not isinstance(label, str):
            raise ToolError("`description` must be a short text.")
        agent_type = self.subagents.type_for(input.get("subagent_type"))
        return await self.subagents.delegate(agent_type, label.strip() or prompt.strip()[:40], prompt)
