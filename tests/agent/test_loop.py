"""The agent loop (agent/loop.py) through the real SDK and the fake server: --max-turns, the one
shrink-and-retry on "prompt is too long", read-only calls run together, and cancelling mid-tool."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from fake_anthropic import Reply

from claude_mini.agent.events import ToolFinished, ToolStarted, TurnDone
from claude_mini.agent.hooks import AgentHooks
from claude_mini.agent.loop import CANCELLED, Agent, MaxTurnsReached, TurnCancelled
from claude_mini.agent.permissions import Allow, Ask, Deny
from claude_mini.llm.client import AnthropicClient, ContextTooLong
from claude_mini.llm.messages import ToolResultBlock
from claude_mini.session import Session
from claude_mini.tools.base import ToolContext
from claude_mini.tools.registry import default_tools


class AllowAll:
    """These tests are about the loop, not the rules."""

    def can_use_tool(self, tool_name: str, input: dict[str, Any]) -> Allow:
        return Allow()


class Shrinker(AgentHooks):
    """Stands in for compaction: drops the oldest messages when the API says the prompt is too long."""

    def __init__(self) -> None:
        self.calls = 0

    async def on_context_too_long(self, agent: Agent) -> bool:
        self.calls += 1
        agent.session.messages[:] = agent.session.messages[-1:]
        return True


def make_agent(cwd: Path, server, **options: Any) -> Agent:
    client = AnthropicClient(base_url=server.base_url, api_key="test")
    return Agent(client=client, session=Session(cwd), tools=default_tools(), policy=AllowAll(),
                 system=["You are a test agent."], model="claude-sonnet-4-6",
                 ctx=ToolContext(cwd=cwd, project_root=cwd), **options)


async def events_of(agent: Agent, text: str) -> list[Any]:
    return [event async for event in agent.run(text)]


def answered(agent: Agent) -> bool:
    """Every tool_use of the conversation has its tool_result (the conversation stays valid)."""
    uses = {b.id for m in agent.session.messages for b in m.tool_uses}
    results = {b.tool_use_id for m in agent.session.messages for b in m.content if isinstance(b, ToolResultBlock)}
    return uses == results


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "a.txt").write_text("alpha\n")
    (tmp_path / "b.txt").write_text("beta\n")
    return tmp_path


def test_max_turns_stops_after_that_many_requests(workdir, fake_server) -> None:
    agent = make_agent(workdir, fake_server, max_turns=2)
    read = Reply.tool("Read", {"file_path": str(workdir / "a.txt")})
    fake_server.queue(read, read, Reply.text("never sent"))
    with pytest.raises(MaxTurnsReached, match="--max-turns 2"):
        asyncio.run(events_of(agent, "read it twice"))
    assert len(fake_server.requests_for("main")) == 2
    assert answered(agent)


def test_prompt_too_long_is_shrunk_and_retried_once(workdir, fake_server) -> None:
    shrinker = Shrinker()
    agent = make_agent(workdir, fake_server, hooks=[shrinker])
    fake_server.queue(Reply.error(400, "prompt is too long: 250000 tokens > 200000 maximum"), Reply.text("fits now"))
    events = asyncio.run(events_of(agent, "hello"))
    assert isinstance(events[-1], TurnDone) and shrinker.calls == 1
    assert len(fake_server.requests_for("main")) == 2


def test_a_second_prompt_too_long_in_one_turn_is_an_error_that_says_what_to_do(workdir, fake_server) -> None:
    shrinker = Shrinker()
    agent = make_agent(workdir, fake_server, hooks=[shrinker])
    too_long = Reply.error(400, "prompt is too long: 250000 tokens > 200000 maximum")
    fake_server.queue(too_long, too_long)
    with pytest.raises(ContextTooLong, match="/compact"):
        asyncio.run(events_of(agent, "hello"))
    assert shrinker.calls == 1


def test_read_only_calls_of_one_response_start_together(workdir, fake_server) -> None:
    agent = make_agent(workdir, fake_server)
    calls = [("Read", {"file_path": str(workdir / name)}) for name in ("a.txt", "b.txt")]
    fake_server.queue(Reply.tools(calls), Reply.text("done"))
    events = asyncio.run(events_of(agent, "read both"))
    kinds = [type(e) for e in events if isinstance(e, ToolStarted | ToolFinished)]
    assert kinds == [ToolStarted, ToolStarted, ToolFinished, ToolFinished]
    results = fake_server.requests_for("main")[-1].body["messages"][-1]["content"]
    assert [r["content"].count("alpha") + r["content"].count("beta") for r in results[:2]] == [1, 1]


def test_cancelling_mid_tool_marks_the_call_and_keeps_the_conversation_valid(workdir, fake_server) -> None:
    agent = make_agent(workdir, fake_server)
    fake_server.queue(Reply.tool("Bash", {"command": "sleep 30"}), Reply.text("never sent"))

    async def cancel_once_started() -> None:
        async def consume() -> None:
            async for event in agent.run("wait"):
                if isinstance(event, ToolStarted):
                    started.set()

        started = asyncio.Event()
        task = asyncio.create_task(consume())
        await started.wait()
        await asyncio.sleep(0.2)  # the shell is running
        task.cancel()
        with pytest.raises(TurnCancelled):
            await task

    asyncio.run(cancel_once_started())
    last = agent.session.messages[-1].content[0]
    assert isinstance(last, ToolResultBlock) and last.is_error and last.content == CANCELLED
    assert answered(agent)
    assert len(fake_server.requests_for("main")) == 1


class Gate(AgentHooks):
    """A lifecycle part with an opinion on tool calls (as the user's PreToolUse hooks will be)."""

    def __init__(self, verdicts: dict[str, Any]) -> None:
        self.verdicts = verdicts
        self.seen: list[str] = []

    async def before_tool(self, agent: Agent, call: Any) -> Any:
        self.seen.append(call.name)
        return self.verdicts.get(call.name)


class AskAll:
    """Rules that would ask the user for everything; Bash(rm) is denied outright."""

    def can_use_tool(self, tool_name: str, input: dict[str, Any]) -> Any:
        if "rm " in str(input.get("command", "")):
            return Deny("rm is denied by a rule")
        return Ask("a rule asks")


def test_before_tool_can_deny_or_spare_a_question_but_not_lift_a_deny_rule(workdir, fake_server) -> None:
    gate = Gate({"Read": Allow(), "Glob": Deny("the hook says no"), "Bash": Allow()})
    agent = make_agent(workdir, fake_server, hooks=[gate])
    agent.policy = AskAll()  # no ask_user: an Ask ends as "permission needed"
    fake_server.queue(Reply.tools([("Read", {"file_path": str(workdir / "a.txt")}),
                                   ("Glob", {"pattern": "*.txt"}),
                                   ("Bash", {"command": "rm a.txt"}),
                                   ("Grep", {"pattern": "alpha"})]), Reply.text("done"))
    asyncio.run(events_of(agent, "go"))
    results = fake_server.requests_for("main")[-1].body["messages"][-1]["content"]
    read, glob, bash, grep = (r["content"] for r in results[:4])
    assert "alpha" in read  # the hook's Allow spared the question
    assert glob == "Permission denied: the hook says no"
    assert bash == "Permission denied: rm is denied by a rule" and (workdir / "a.txt").exists()
    assert grep.startswith("Permission needed to run Grep")  # no opinion: the rules decide
    assert gate.seen == ["Read", "Glob", "Bash", "Grep"]
