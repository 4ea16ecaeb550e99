"""The Lifecycle's combination rules, one per event, on parts that record what they were asked."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from claude_mini.agent.lifecycle import Lifecycle, Part, ToolVerdict
from claude_mini.llm.messages import ToolUseBlock, Usage
from claude_mini.permissions import Allow, Ask, Deny
from claude_mini.tools.base import ToolContext

CALL = ToolUseBlock("toolu_1", "Bash", {"command": "ls"})


class Recorder(Part):
    """A part that notes each call in a shared log and answers as it was told to."""

    def __init__(self, name: str, log: list[str], *, shrinks: bool = False, verdict: ToolVerdict | None = None):
        self.name, self.log, self.shrinks, self.verdict = name, log, shrinks, verdict

    async def on_context_too_long(self, agent: Any) -> bool:
        self.log.append(self.name)
        return self.shrinks

    async def before_tool(self, agent: Any, call: ToolUseBlock) -> ToolVerdict | None:
        self.log.append(f"{self.name}:{call.input['command']}")
        return self.verdict

    async def after_compact(self, agent: Any) -> None:
        self.log.append(self.name)

    async def on_session_end(self, agent: Any, reason: Any = "other") -> None:
        self.log.append(self.name)
        if self.name == "broken":
            raise RuntimeError("cannot stop")

    async def before_turn_end(self, agent: Any, continued: int) -> str | None:
        return f"{self.name} wants more" if self.shrinks else None


def test_find_returns_the_first_part_of_a_type_or_none():
    log: list[str] = []
    first, second = Recorder("a", log), Recorder("b", log)
    lifecycle = Lifecycle([Part(), first, second])
    assert lifecycle.find(Recorder) is first
    assert Lifecycle([Part()]).find(Recorder) is None


def test_the_first_part_that_shrank_the_context_wins():
    log: list[str] = []
    parts = [Recorder("a", log), Recorder("b", log, shrinks=True), Recorder("c", log, shrinks=True)]
    assert asyncio.run(Lifecycle(parts).on_context_too_long(None))  # type: ignore[arg-type]
    assert log == ["a", "b"]


def test_a_deny_beats_an_ask_beats_an_allow_and_each_part_sees_the_last_rewrite():
    log: list[str] = []
    parts = [
        Recorder("allow", log, verdict=ToolVerdict(Allow(), {"command": "ls -a"})),
        Recorder("ask", log, verdict=ToolVerdict(Ask("check"))),
        Recorder("deny", log, verdict=ToolVerdict(Deny("no"))),
    ]
    decision, updated = asyncio.run(Lifecycle(parts).before_tool(None, CALL))  # type: ignore[arg-type]
    assert isinstance(decision, Deny) and updated == {"command": "ls -a"}
    assert log == ["allow:ls", "ask:ls -a", "deny:ls -a"]
    decision, _ = asyncio.run(Lifecycle(parts[:2]).before_tool(None, CALL))  # type: ignore[arg-type]
    assert isinstance(decision, Ask)
    assert asyncio.run(Lifecycle([Recorder("quiet", log)]).before_tool(None, CALL)) == (None, None)  # type: ignore[arg-type]


def test_after_compact_unwinds_in_reverse_order():
    log: list[str] = []
    asyncio.run(Lifecycle([Recorder("a", log), Recorder("b", log)]).after_compact(None))  # type: ignore[arg-type]
    assert log == ["b", "a"]


def test_a_part_that_fails_to_end_does_not_keep_the_others_from_ending():
    log: list[str] = []
    asyncio.run(Lifecycle([Recorder("broken", log), Recorder("b", log)]).on_session_end(None))  # type: ignore[arg-type]
    assert log == ["broken", "b"]


def test_reasons_to_go_on_are_joined_and_none_when_nobody_has_one():
    log: list[str] = []
    both = Lifecycle([Recorder("a", log, shrinks=True), Recorder("b", log), Recorder("c", log, shrinks=True)])
    assert asyncio.run(both.before_turn_end(None, 0)) == "a wants more\n\nc wants more"  # type: ignore[arg-type]
    assert asyncio.run(Lifecycle([Recorder("b", log)]).before_turn_end(None, 0)) is None  # type: ignore[arg-type]


def test_reset_conversation_forgets_the_files_read_and_the_last_requests_size(tmp_path: Path):
    ctx = ToolContext(cwd=tmp_path, project_root=tmp_path)
    ctx.read_files[tmp_path / "a.txt"] = 1.0
    agent = SimpleNamespace(ctx=ctx, last_usage=Usage(input_tokens=5))
    Lifecycle().reset_conversation(agent)  # type: ignore[arg-type]
    assert ctx.read_files == {} and agent.last_usage == Usage()
