"""The todo list across resume, /clear, /rewind and compaction: a lifecycle part over the list
TodoWrite keeps on the main agent's `ToolContext.todos` (tools/todo.py).

`TodoPart` rebuilds the list from the last successful TodoWrite call when a conversation is
resumed or rewound, and puts it beside the summary when one is compacted (as JSON, so a resume
after the compaction finds it again).
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from claude_mini.agent.lifecycle import ConversationRewind, Part, PartContext, SessionSource
from claude_mini.llm.messages import Block, Message, TextBlock, ToolResultBlock, ToolUseBlock
from claude_mini.tools.base import ToolContext, ToolError
from claude_mini.tools.todo import Todo, TodoWriteTool, parse_todos, progress

if TYPE_CHECKING:
    from claude_mini.agent.loop import Agent
    from claude_mini.session import Session

COMPACT_NOTE = "The todo list as it stood before the summary: "
_COMPACT_LIST = re.compile(re.escape(COMPACT_NOTE) + r"(\{.*\})$", re.MULTILINE)


def todos_in(messages: Sequence[Message]) -> list[Todo]:
    """The list a conversation ends with: from its last successful TodoWrite call, or from the
    list a compaction put beside the summary, whichever came last (empty if neither)."""
    succeeded = {
        b.tool_use_id for m in messages for b in m.content if isinstance(b, ToolResultBlock) and not b.is_error
    }
    todos: list[Todo] = []
    for message in messages:
        for block in message.content:
            found = _list_in(block, succeeded)
            if found is not None:
                with contextlib.suppress(ToolError):  # an edited transcript: keep the list from before
                    todos = parse_todos(found)
    return todos


def _list_in(block: Block, succeeded: set[str]) -> Any:
    """The `todos` value a block holds: a successful TodoWrite call's, or a compaction's note's."""
    if isinstance(block, ToolUseBlock) and block.name == TodoWriteTool.name and block.id in succeeded:
        return block.input.get("todos") if isinstance(block.input, dict) else None
    if isinstance(block, TextBlock) and COMPACT_NOTE in block.text:
        match = _COMPACT_LIST.search(block.text)
        try:
            return json.loads(match.group(1)).get("todos") if match else None
        except (ValueError, AttributeError):
            return None
    return None


def compact_note(todos: Sequence[Todo]) -> str:
    """The list as one attachment beside a summary, in TodoWrite's own input form."""
    listed = json.dumps({"todos": [t.as_input() for t in todos]}, ensure_ascii=False)
    return (
        f"{COMPACT_NOTE}{listed}\n"
        "It is still the current list: update it with TodoWrite (the whole list) as the work goes on."
    )


class TodoPart(Part):
    """The session's todo list across resume, /clear and compaction; its line in /context.

    It holds the main agent's `ToolContext`, where TodoWriteTool keeps the list."""

    def __init__(self, ctx: ToolContext) -> None:
        self.ctx = ctx

    async def on_session_start(self, agent: Agent, source: SessionSource) -> None:
        """A resumed conversation gets its list back (a new one has none)."""
        self.ctx.todos = todos_in(agent.session.messages)

    def on_session_change(self, session: Session, source: SessionSource) -> None:
        """/clear starts with no list; /resume takes the list of the conversation resumed."""
        self.ctx.todos = todos_in(session.messages) if source == "resume" else []

    async def on_rewind(self, agent: Agent, rewind: ConversationRewind) -> None:
        """The list is the one of the conversation as it is now (its last TodoWrite)."""
        self.ctx.todos = todos_in(agent.session.messages)

    def compact_attachments(self, agent: Agent) -> list[str]:
        """The current list, so it survives the summary (nothing when there is none)."""
        return [compact_note(self.ctx.todos)] if self.ctx.todos else []

    def context_report(self) -> list[str]:
        """/context: how far the list is (nothing when there is none)."""
        return [f"Todos: {progress(self.ctx.todos)} (/todos shows them)"] if self.ctx.todos else []


def part(ctx: PartContext[object]) -> TodoPart:
    """The session's todo part, over the main agent's tool context."""
    return TodoPart(ctx.agent.ctx)
