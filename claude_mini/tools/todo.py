"""TodoWrite: the model's own checklist for a task of several steps.

The list lives in memory on `ToolContext.todos` (a subagent's context has its own), as in
Claude Code; each call sends the whole list, which replaces the previous one. Nothing is
written to disk: the conversation itself is the record (`agent/todos.py` keeps the list across
resume, /clear, /rewind and compaction).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, cast

from claude_mini.tools.base import ToolContext, ToolError, ToolResult

if TYPE_CHECKING:
    pass

Status = Literal["pending", "in_progress", "completed"]
STATUSES: tuple[Status, ...] = ("pending", "in_progress", "completed")

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
