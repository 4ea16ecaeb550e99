"""TodoWrite: the model's own checklist for a task of several steps.

The list lives in memory on `ToolContext.todos` (a subagent's context has its own), as in
Claude Code; each call sends the whole list, which replaces the previous one. Nothing is
written to disk: the conversation itself is the record. `TodoHook` rebuilds the list from
the last successful TodoWrite call when a conversation is resumed, and puts it beside the
summary when one is compacted (as JSON, so a resume after the compaction finds it again).
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, cast

from claude_mini.agent.hooks import AgentHooks, ConversationRewind, SessionSource
from claude_mini.llm.messages import Block, Message, TextBlock, ToolResultBlock, ToolUseBlock
from claude_mini.tools.base import ToolContext, ToolError, ToolResult

if TYPE_CHECKING:
    from claude_mini.agent.loop import Agent
    from claude_mini.session import Session

Status = Literal["pending", "in_progress", "completed"]
STATUSES: tuple[Status, ...] = ("pending", "in_progress", "completed")
COMPACT_NOTE = "The todo list as it stood before the summary: "
_COMPACT_LIST = re.compile(re.escape(COMPACT_NOTE) + r"(\{.*\})$", re.MULTILINE)

DESCRIPTION = """\
Keep a checklist for the current task: what is done, what you are doing, what is left. \
Use it for work of three or more distinct steps, or when the user gives several things to do; \
skip it for a single quick change or a question.

- Each item has `content` (the step, imperative: "Run the tests"), `activeForm` (the same step \
as it is being done: "Running the tests") and `status`: pending, in_progress or completed.
- Send the whole list every time: it replaces the previous one. Add items as you discover them \
and drop those that no longer apply.
- Mark an item in_progress before you start it (one at a time is clearest) and completed as \
soon as it is done, not in a batch at the end. Leave an item in_progress if it failed or is \
blocked, and add one for what must happen first."""


@dataclass(frozen=True)
class Todo:
    """One item of the list, as the model sent it."""

    content: str
    status: Status
    active_form: str

    def as_input(self) -> dict[str, str]:
        """The item in TodoWrite's input form (Claude Code's field names)."""
        return {"content": self.content, "status": self.status, "activeForm": self.active_form}


def _schema() -> dict[str, Any]:
    item = {
        "type": "object",
        "properties": {
            "content": {"type": "string", "minLength": 1},
            "status": {"type": "string", "enum": list(STATUSES)},
            "activeForm": {"type": "string", "minLength": 1},
        },
        "required": ["content", "status", "activeForm"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {"todos": {"type": "array", "description": "The updated todo list", "items": item}},
        "required": ["todos"],
        "additionalProperties": False,
    }


def parse_todos(value: Any) -> list[Todo]:
    """The list TodoWrite was sent, or a ToolError naming the first thing wrong with it."""
    if value is None:
        raise ToolError(
            "Missing required parameter `todos` (the whole list, each item with content, status and activeForm)."
        )
    if not isinstance(value, list):
        raise ToolError(f"Parameter `todos` must be a list of items, got {type(value).__name__}.")
    return [_parse_item(item, f"todos[{i}]") for i, item in enumerate(value)]


def _parse_item(item: Any, where: str) -> Todo:
    if not isinstance(item, dict):
        raise ToolError(f"{where} must be an object with content, status and activeForm, got {type(item).__name__}.")
    unknown = sorted(set(item) - {"content", "status", "activeForm"})
    if unknown:
        raise ToolError(
            f"{where} has an unknown field `{unknown[0]}`; an item has only content, status and activeForm."
        )
    for key in ("content", "activeForm"):
        if not isinstance(item.get(key), str) or not item[key].strip():
            raise ToolError(f"{where}.{key} must be a non-empty string.")
    status = item.get("status")
    if status not in STATUSES:
        raise ToolError(f"{where}.status must be pending, in_progress or completed, got {status!r}.")
    return Todo(item["content"], cast(Status, status), item["activeForm"])


def counts(todos: Sequence[Todo]) -> dict[Status, int]:
    """How many items have each status."""
    return {status: sum(t.status == status for t in todos) for status in STATUSES}


def progress(todos: Sequence[Todo]) -> str:
    """`2 of 5 completed`."""
    return f"{counts(todos)['completed']} of {len(todos)} completed"


def result_text(todos: Sequence[Todo]) -> str:
    """What the model reads back: the size of the list and where it stands."""
    if not todos:
        return "The todo list is now empty."
    n = counts(todos)
    items = "1 item" if len(todos) == 1 else f"{len(todos)} items"
    return (
        f"Todo list updated: {items} ({n['completed']} completed, {n['in_progress']} in progress, "
        f"{n['pending']} pending). Keep it current as you work: mark the next item in_progress "
        "before starting it and completed as soon as it is done."
    )


class TodoWriteTool:
    """The TodoWrite tool: replaces the session's todo list with the one sent."""

    name = "TodoWrite"
    description = DESCRIPTION
    read_only = False  # two calls in one response must apply in order, the last one winning

    def __init__(self) -> None:
        self.input_schema = _schema()

    def validate(self, input: dict[str, Any], ctx: ToolContext) -> None:
        """A malformed list fails before anyone is asked about it."""
        parse_todos(input.get("todos"))

    async def call(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Keep the new list on the context; the UI gets it in `metadata["todos"]`."""
        todos = parse_todos(input.get("todos"))
        ctx.todos = todos
        return ToolResult(result_text(todos), metadata={"todos": list(todos)})


# ---------------------------------------------------------------- the list across resume and compaction


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


class TodoHook(AgentHooks):
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
