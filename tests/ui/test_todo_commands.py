"""The todo list in the REPL: `/todos`, and the list under the answer of a turn that changed it."""

from __future__ import annotations

import asyncio

from claude_mini.agent.events import ToolFinished, ToolStarted
from claude_mini.llm.events import TextDelta
from claude_mini.llm.messages import ToolUseBlock
from claude_mini.tools.base import ToolContext, ToolResult
from claude_mini.tools.todo import TodoWriteTool
from claude_mini.ui.render import Renderer
from tests.tools.test_todo import PLAN, todos
from tests.ui.conftest import make_console


def test_todos_prints_the_list_or_says_there_is_none(slash):
    assert slash.run("/todos") == "No todo list in this conversation.\n"
    slash.runtime.agent.ctx.todos = todos([*PLAN, {**PLAN[2], "content": "Tag\x1b[2J the\n release"}])
    assert slash.run("/todos").splitlines() == [
        "Todos · 1 of 4 completed",
        "  ☒ Read the parser",
        "  ◼ Write the tests",
        "  ☐ Update the README",
        "  ☐ Tag\\x1b[2J the release",  # one line each, controls made visible
    ]


def _todo_write(ctx: ToolContext, items: list[dict], id: str = "toolu_t") -> tuple[ToolUseBlock, ToolResult]:
    call = ToolUseBlock(id, "TodoWrite", {"todos": items})
    return call, asyncio.run(TodoWriteTool().call(call.input, ctx))


def _turn(renderer: Renderer, *finished: ToolFinished, answer: str = "Planned.") -> None:
    renderer.begin_turn()
    for event in finished:
        renderer.on_event(ToolStarted(event.call))
        renderer.on_event(event)
    renderer.on_event(TextDelta(answer, 0))
    renderer.end_turn()


def test_the_list_is_shown_under_the_answer_of_a_turn_that_changed_it(tmp_path):
    ctx = ToolContext(cwd=tmp_path, project_root=tmp_path)
    console = make_console()
    renderer = Renderer(console, plain=False)
    first = ToolFinished(*_todo_write(ctx, [{**item, "status": "pending"} for item in PLAN]))
    last = ToolFinished(*_todo_write(ctx, PLAN))
    _turn(renderer, first, last)
    shown = [line.rstrip() for line in console.file.getvalue().splitlines()]
    assert shown[-6:] == [
        "Planned.",
        "",
        "Todos · 1 of 3 completed",  # the last call's list, once
        "  ☒ Read the parser",
        "  ◼ Write the tests",
        "  ☐ Update the README",
    ]
    assert shown.count("Todos · 1 of 3 completed") == 1 and "Todos · 0 of 3 completed" not in shown

    console.file.truncate(0)
    console.file.seek(0)
    _turn(renderer, answer="Nothing to plan.")  # no TodoWrite this turn: no list
    assert console.file.getvalue().strip() == "Nothing to plan."


def test_a_failed_or_denied_todo_write_shows_no_list(tmp_path):
    console = make_console()
    renderer = Renderer(console, plain=False)
    call = ToolUseBlock("toolu_t", "TodoWrite", {"todos": "nope"})
    _turn(
        renderer,
        ToolFinished(call, ToolResult("Parameter `todos` must be a list of items, got str.", True)),
        ToolFinished(call, ToolResult("Permission denied: no", True), denied=True),
    )
    assert "Todos ·" not in console.file.getvalue()


def test_an_emptied_list_says_so(tmp_path):
    ctx = ToolContext(cwd=tmp_path, project_root=tmp_path)
    console = make_console()
    _turn(Renderer(console, plain=True), ToolFinished(*_todo_write(ctx, [])), answer="All clear.\n")
    assert console.file.getvalue().splitlines()[-1] == "Todos · the list is empty now"
