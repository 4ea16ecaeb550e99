"""TodoWrite: the list on the context, its checks, and TodoPart across resume, /clear and compaction."""

from __future__ import annotations

import asyncio
import inspect
import io
from types import SimpleNamespace

import pytest
from rich.console import Console

from claude_mini.agent.todos import TodoPart, todos_in
from claude_mini.command_table import builtin_table
from claude_mini.config import load_config
from claude_mini.llm.anthropic_client import AnthropicClient
from claude_mini.llm.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from claude_mini.runtime import build_runtime
from claude_mini.session import Session, open_transcript
from claude_mini.tools import ToolError
from claude_mini.tools.todo import Todo, TodoWriteTool
from claude_mini.ui.commands import CommandContext
from tests.fake_anthropic import Reply

PLAN = [
    {"content": "Read the parser", "status": "completed", "activeForm": "Reading the parser"},
    {"content": "Write the tests", "status": "in_progress", "activeForm": "Writing the tests"},
    {"content": "Update the README", "status": "pending", "activeForm": "Updating the README"},
]
DONE = [{**item, "status": "completed"} for item in PLAN]


def todos(items: list[dict]) -> list[Todo]:
    return [Todo(i["content"], i["status"], i["activeForm"]) for i in items]


def test_a_list_replaces_the_one_before_and_the_result_counts_it(ctx, run):
    tool = TodoWriteTool()
    run(tool, todos=[{"content": "Old", "status": "pending", "activeForm": "Doing old"}])
    result = run(tool, todos=PLAN)
    assert ctx.todos == todos(PLAN)
    assert result.metadata["todos"] == todos(PLAN)
    assert result.content.startswith("Todo list updated: 3 items (1 completed, 1 in progress, 1 pending).")
    assert not result.is_error


def test_two_items_in_progress_are_accepted_and_an_empty_list_clears_it(ctx, run):
    tool = TodoWriteTool()
    both = [{**item, "status": "in_progress"} for item in PLAN[:2]]
    assert run(tool, todos=both).content.startswith("Todo list updated: 2 items (0 completed, 2 in progress")
    assert run(tool, todos=[]).content == "The todo list is now empty."
    assert ctx.todos == []


@pytest.mark.parametrize(
    ("todos_input", "message"),
    [
        (None, "Missing required parameter `todos`"),
        ("write tests", "Parameter `todos` must be a list of items, got str."),
        (["write tests"], "todos[0] must be an object with content, status and activeForm, got str."),
        ([PLAN[0], {**PLAN[1], "content": "  "}], "todos[1].content must be a non-empty string."),
        ([{"content": "x", "status": "pending"}], "todos[0].activeForm must be a non-empty string."),
        ([{**PLAN[0], "status": "done"}], "todos[0].status must be pending, in_progress or completed, got 'done'."),
        (
            [{**PLAN[0], "id": "1"}],
            "todos[0] has an unknown field `id`; an item has only content, status and activeForm.",
        ),
    ],
)
def test_a_bad_list_fails_with_one_line_and_keeps_the_list(ctx, todos_input, message):
    tool = TodoWriteTool()
    ctx.todos = todos(PLAN)
    input = {} if todos_input is None else {"todos": todos_input}
    for attempt in (lambda: tool.validate(input, ctx), lambda: asyncio.run(tool.call(input, ctx))):
        with pytest.raises(ToolError) as raised:
            attempt()
        assert message in str(raised.value) and "\n" not in str(raised.value)
    assert ctx.todos == todos(PLAN)


def test_the_schema_is_claude_codes():
    schema = TodoWriteTool().input_schema
    item = schema["properties"]["todos"]["items"]
    assert schema["required"] == ["todos"]
    assert item["required"] == ["content", "status", "activeForm"]
    assert item["properties"]["status"]["enum"] == ["pending", "in_progress", "completed"]
    assert item["additionalProperties"] is False


def _call(id: str, items: list[dict]) -> Message:
    return Message("assistant", [ToolUseBlock(id, "TodoWrite", {"todos": items})])


def _result(id: str, *, error: bool = False) -> Message:
    return Message("user", [ToolResultBlock(id, "ok", is_error=error)])


def test_the_list_of_a_conversation_is_its_last_successful_call():
    messages = [
        _call("t1", PLAN),
        _result("t1"),
        _call("t2", DONE),
        _result("t2", error=True),
        _call("t3", [{"content": "bad"}]),
        _result("t3"),
    ]  # an edited transcript: not a list
    assert todos_in(messages) == todos(PLAN)
    assert todos_in(messages + [_call("t4", DONE)]) == todos(PLAN)  # no result: it never ran
    assert todos_in(messages + [_call("t4", DONE), _result("t4")]) == todos(DONE)
    assert todos_in([]) == []


def test_the_hook_rebuilds_clears_and_reports(ctx):
    hook = TodoPart(ctx)
    resumed = Session(ctx.cwd)
    resumed.messages += [_call("t1", PLAN), _result("t1")]
    asyncio.run(hook.on_session_start(SimpleNamespace(session=resumed), "resume"))  # type: ignore[arg-type]
    assert ctx.todos == todos(PLAN)
    assert hook.context_report() == ["Todos: 1 of 3 completed (/todos shows them)"]
    hook.on_session_change(Session(ctx.cwd), "clear")
    assert ctx.todos == [] and hook.context_report() == [] and hook.compact_attachments(None) == []  # type: ignore[arg-type]
    hook.on_session_change(resumed, "resume")
    assert ctx.todos == todos(PLAN)


def test_the_list_beside_a_summary_is_found_again():
    ctx = SimpleNamespace(todos=todos(PLAN))
    [note] = TodoPart(ctx).compact_attachments(None)  # type: ignore[arg-type]
    assert note.startswith('The todo list as it stood before the summary: {"todos": [')
    summary = Message(
        "user", [TextBlock("<summary>S</summary>"), TextBlock(f"<system-reminder>\n{note}\n</system-reminder>")]
    )
    assert todos_in([summary]) == todos(PLAN)
    assert todos_in([summary, _call("t9", DONE), _result("t9")]) == todos(DONE)  # a later call wins


async def _command(runtime, name: str, args: str = "") -> str:
    out = io.StringIO()
    ctx = CommandContext(None, runtime, Console(file=out, width=100), args)  # type: ignore[arg-type]
    done = builtin_table().find(name).run(ctx)
    if inspect.isawaitable(done):
        await done
    return out.getvalue()


def test_the_list_survives_compaction_and_a_resume_after_it(tmp_path, fake_server, monkeypatch):
    """Through the real runtime: TodoWrite needs no question in -p (nobody can be asked), /compact
    puts the list beside the summary, and a session resumed from the transcript has it back."""
    monkeypatch.setenv("CLAUDE_MINI_DISABLE_AUTO_MEMORY", "1")
    config = load_config(tmp_path)
    fake_server.on(Reply.text("<summary>SUM</summary>"), purpose="compact")
    fake_server.queue(Reply.tool("TodoWrite", {"todos": PLAN}), Reply.text("Planned."))

    async def scenario():
        client = AnthropicClient(base_url=fake_server.base_url, api_key="test")
        runtime = build_runtime(config, client=client)  # ask_user None: as in -p
        await runtime.start(source="startup", dream=False)
        async for _ in runtime.agent.run("plan the release"):
            pass
        assert "Compacted" in await _command(runtime, "compact")
        transcript = runtime.session.transcript.path
        resumed = build_runtime(config, client=client, session=open_transcript(config.cwd, transcript))
        await resumed.start(source="resume", dream=False)
        context = await _command(resumed, "context")
        await client.aclose()
        return runtime, resumed, context

    runtime, resumed, context = asyncio.run(scenario())
    tools = [t["name"] for t in fake_server.requests_for("main")[0].body["tools"]]
    assert tools[:7] == ["Read", "Write", "Edit", "Bash", "Grep", "Glob", "TodoWrite"]
    result = fake_server.requests_for("main")[1].body["messages"][-1]["content"][0]
    assert result["type"] == "tool_result" and not result.get("is_error"), result
    [compacted] = runtime.session.messages
    assert "The todo list as it stood before the summary" in compacted.text
    assert runtime.agent.ctx.todos == resumed.agent.ctx.todos == todos(PLAN)
    assert "Todos: 1 of 3 completed" in context
