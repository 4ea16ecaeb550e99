"""A subagent in the REPL's renderer: one live line while it runs, its summary when its call ends."""

from __future__ import annotations

from pathlib import Path

from claude_mini.agent.events import MessageAdded, ToolFinished, ToolStarted
from claude_mini.agent.subagent_run import SubagentRun
from claude_mini.llm.messages import Message, ToolUseBlock
from claude_mini.tools.base import ToolResult
from claude_mini.ui.render import Renderer, tool_block, tool_label
from tests.ui.conftest import make_console

CALL = ToolUseBlock(
    "toolu_1", "Agent", {"description": "Find date parsing", "prompt": "Find it.", "subagent_type": "Explore"}
)


def child(tool_use_id: str = "toolu_1", description: str = "Find date parsing") -> SubagentRun:
    return SubagentRun("a1" + tool_use_id, "Explore", description, tool_use_id, 1, Path("agent-a1.jsonl"))


def test_a_running_child_is_the_live_line_with_its_count_and_step():
    now = [100.0]
    renderer = Renderer(make_console(), plain=False, clock=lambda: now[0])
    renderer.begin_turn()
    renderer.on_event(ToolStarted(CALL))
    run = child()
    renderer.on_subagent(run, MessageAdded(Message.user("Find it.")))
    now[0] = 102.5
    assert renderer.spinner_text() == "Explore(Find date parsing) · 0 tool calls · thinking… 2s · esc to interrupt"
    grep = ToolUseBlock("toolu_2", "Grep", {"pattern": "fromisoformat"})
    renderer.on_subagent(run, ToolStarted(grep))
    assert renderer.spinner_text().startswith("Explore(Find date parsing) · 0 tool calls · Grep(fromisoformat)…")
    run.tool_count = 1
    renderer.on_subagent(run, ToolFinished(grep, ToolResult("dates.py")))
    other = child("toolu_3", "Find tests")
    renderer.on_subagent(other, MessageAdded(Message.user("Find tests.")))
    assert renderer.spinner_text().startswith(
        "Explore(Find date parsing) · 1 tool call · thinking; Explore(Find tests) · 0 tool calls · thinking…"
    )
    run.status = "completed"
    renderer.on_event(
        ToolFinished(CALL, ToolResult("dates.py:4.\n\n[subagent Explore · 1 tool call · 10 tokens · 2.5 s]"))
    )
    assert renderer.spinner_text().startswith("Explore(Find tests) · 0 tool calls · thinking…")


def test_an_agent_call_shows_its_type_and_task_then_only_the_summary():
    assert tool_label(CALL) == "Explore(Find date parsing)"
    assert (
        tool_label(ToolUseBlock("t", "Agent", {"description": "Summarise", "prompt": "x"}))
        == "general-purpose(Summarise)"
    )
    console = make_console()
    console.print(
        tool_block(
            CALL,
            ToolResult(
                "line one\nline two\nline three\nline four\n\n[subagent Explore · 3 tool calls · 1,234 tokens · 2.0 s]"
            ),
        )
    )
    assert [line.rstrip() for line in console.file.getvalue().splitlines()] == [
        "● Explore(Find date parsing)",
        "  ⎿  [subagent Explore · 3 tool calls · 1,234 tokens · 2.0 s]",
    ]
