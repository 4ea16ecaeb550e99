"""Forked agents (agent/fork.py) through the fake server and the real SDK: the exact parent
prefix, the fork's own loop and context, the turn cap, the no-tools policy, the cache guard."""

from __future__ import annotations

import asyncio
import copy
import logging
from pathlib import Path
from typing import Any

import pytest

from claude_mini.agent.fork import (
    NO_TOOLS,
    Fork,
    ForkSnapshot,
    prefix_mismatches,
    run_fork,
    strip_cache_control,
    with_prompt,
)
from claude_mini.agent.lifecycle import ToolVerdict
from claude_mini.agent.loop import Agent
from claude_mini.llm.anthropic_client import AnthropicClient
from claude_mini.llm.messages import Message, ModelRequest, TextBlock, ToolResultBlock
from claude_mini.llm.protocol import InvalidRequest
from claude_mini.permissions import Allow, Deny, PermissionPolicy
from claude_mini.session import Session
from claude_mini.tools.base import ToolContext
from claude_mini.tools.registry import default_tools
from tests.fake_anthropic import Reply

SYSTEM = ["You are a test agent.", "Project notes: keep answers short."]


class AllowAll:
    """A policy that lets the fork do anything (these tests are about the loop, not the rules)."""

    def can_use_tool(self, tool_name: str, input: dict[str, Any]) -> Allow:
        return Allow()


def make_agent(cwd: Path, server) -> Agent:
    client = AnthropicClient(base_url=server.base_url, api_key="test")
    ctx = ToolContext(cwd=cwd, project_root=cwd)
    policy = PermissionPolicy(cwd=lambda: ctx.cwd, project_root=cwd)
    return Agent(
        client=client,
        session=Session(cwd),
        tools=default_tools(),
        policy=policy,
        system=list(SYSTEM),
        model="claude-sonnet-4-6",
        ctx=ctx,
        max_tokens=32000,
    )


async def turn(agent: Agent, text: str) -> None:
    async for _ in agent.run(text):
        pass


def run(coro):
    return asyncio.run(coro)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "notes.txt").write_text("alpha\nbeta\n")
    return tmp_path


def test_fork_request_is_the_parent_prefix_plus_one_user_message(workdir, fake_server):
    fake_server.on(Reply.tool("Read", {"file_path": "notes.txt"}), purpose="main")
    fake_server.on(Reply.text("It lists alpha and beta."), purpose="main")
    fake_server.on(Reply.text("Nothing to save."), purpose="extract")

    async def go():
        agent = make_agent(workdir, fake_server)
        await turn(agent, "what is in notes.txt?")
        result = await run_fork(agent, "FORK TASK", purpose="extract", policy=NO_TOOLS)
        await agent.client.aclose()
        return agent, result

    agent, result = run(go())
    main = fake_server.requests_for("main")[-1]
    fork = fake_server.requests_for("extract")[0]
    assert fork.headers["x-claude-mini-purpose"] == "extract"
    for key in ("tools", "system"):  # byte-identical, cache breakpoints included
        assert fork.body[key] == main.body[key]
    for key in ("model", "max_tokens"):
        assert fork.body[key] == main.body[key]
    sent = strip_cache_control(main.body["messages"])
    assert strip_cache_control(fork.body["messages"][: len(sent)]) == sent
    rest = fork.body["messages"][len(sent) :]
    assert [m["role"] for m in rest] == ["assistant", "user"]  # the parent's answer, then the task
    assert rest[-1]["content"][0]["text"] == "FORK TASK"
    assert result.text == "Nothing to save." and result.turns == 1 and result.mismatches == []
    assert len(agent.session.messages) == 4  # the fork's messages never joined the conversation
    transcript = agent.session.transcript.path.read_text()
    assert "FORK TASK" not in transcript and "Nothing to save." not in transcript


def test_fork_reads_the_parents_cache_and_books_its_cost(workdir, fake_server):
    fake_server.on(Reply.text("Hello."), purpose="main")
    fake_server.on(Reply.text("Done."), purpose="compact")

    async def go():
        agent = make_agent(workdir, fake_server)
        await turn(agent, "hi")
        await run_fork(agent, "summarise", purpose="compact", policy=NO_TOOLS, max_turns=1)
        await agent.client.aclose()
        return agent

    agent = run(go())
    main_usage = fake_server.requests_for("main")[0].usage
    fork_usage = fake_server.requests_for("compact")[0].usage
    assert fork_usage["cache_read_input_tokens"] == main_usage["cache_creation_input_tokens"] > 0
    costs = agent.session.costs.by_purpose
    assert costs["compact"].requests == 1 and costs["main"].requests == 1
    assert costs["compact"].usage.cache_read_input_tokens == fork_usage["cache_read_input_tokens"]


def test_fork_runs_tools_in_its_own_context(workdir, fake_server):
    fake_server.on(Reply.text("ok"), purpose="main")
    fake_server.on(Reply.tools([("Read", {"file_path": "notes.txt"}), ("Bash", {"command": "cd /"})]), purpose="dream")
    fake_server.on(Reply.text("read it"), purpose="dream")

    async def go():
        agent = make_agent(workdir, fake_server)
        await turn(agent, "hi")
        fork = Fork(agent, purpose="dream", policy=AllowAll())
        result = await fork.run("read notes.txt")
        await agent.client.aclose()
        return agent, fork, result

    agent, fork, result = run(go())
    assert agent.ctx.read_files == {} and agent.ctx.cwd == workdir  # the parent's state untouched
    assert workdir / "notes.txt" in fork.ctx.read_files and fork.ctx.cwd == Path("/")
    second = fake_server.requests_for("dream")[1].body["messages"][-1]["content"]
    assert "alpha" in second[0]["content"] and second[0]["type"] == "tool_result"
    assert result.turns == 2 and result.text == "read it" and result.written == []


def test_fork_is_stopped_at_its_turn_limit(workdir, fake_server):
    fake_server.on(Reply.text("ok"), purpose="main")
    fake_server.on(Reply.tool("Read", {"file_path": "notes.txt"}), purpose="extract", times=None)

    async def go():
        agent = make_agent(workdir, fake_server)
        await turn(agent, "hi")
        result = await run_fork(agent, "loop forever", purpose="extract", policy=AllowAll(), max_turns=5)
        await agent.client.aclose()
        return result

    result = run(go())
    assert len(fake_server.requests_for("extract")) == 5
    assert result.turns == 5 and result.hit_turn_limit and result.stop_reason == "tool_use"
    assert len(result.tool_runs) == 4  # the fifth response's call was not run


def test_no_tools_policy_keeps_the_tool_list_and_denies_every_call(workdir, fake_server):
    fake_server.on(Reply.text("ok"), purpose="main")
    fake_server.on(Reply.tool("Write", {"file_path": "x.txt", "content": "x"}), purpose="compact")
    fake_server.on(Reply.text("<summary>short</summary>"), purpose="compact")

    async def go():
        agent = make_agent(workdir, fake_server)
        await turn(agent, "hi")
        result = await run_fork(agent, "summarise", purpose="compact", policy=NO_TOOLS, max_turns=2)
        await agent.client.aclose()
        return result

    result = run(go())
    requests = fake_server.requests_for("compact")
    assert requests[0].body["tools"] == fake_server.requests_for("main")[0].body["tools"]
    denial = requests[1].body["messages"][-1]["content"][0]
    assert denial["is_error"] and "Write is not available" in denial["content"]
    assert not (workdir / "x.txt").exists()
    assert [r.call.name for r in result.denials] == ["Write"] and result.text == "<summary>short</summary>"


def test_mid_turn_fork_adds_its_task_to_the_last_user_message(workdir, fake_server):
    """Compaction forks before a request, when the conversation ends with tool results."""
    fake_server.on(Reply.text("<summary>s</summary>"), purpose="compact")

    async def go():
        agent = make_agent(workdir, fake_server)
        agent.session.messages += [
            Message.user("read it"),
            Message("assistant", [TextBlock("reading")]),
            Message("user", [ToolResultBlock("toolu_1", "alpha")]),
        ]
        await run_fork(agent, "summarise now", purpose="compact", policy=NO_TOOLS, max_turns=1)
        await agent.client.aclose()
        return agent

    agent = run(go())
    body = fake_server.requests_for("compact")[0].body
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    last = body["messages"][-1]["content"]
    assert last[0]["type"] == "tool_result" and last[1]["text"] == "summarise now"
    assert len(agent.session.messages[-1].content) == 1  # the parent's message was not changed


def test_with_prompt_never_mutates_its_input():
    messages = [Message.user("a")]
    out = with_prompt(messages, "task")
    assert len(messages[0].content) == 1 and len(out) == 1 and out[0].content[-1].text == "task"
    messages = [Message.user("a"), Message("assistant", [TextBlock("b")])]
    assert [m.role for m in with_prompt(messages, "task")] == ["user", "assistant", "user"]


def test_prefix_mismatches_names_what_differs():
    tools = [
        {"name": "Read", "description": "r", "input_schema": {}},
        {"name": "Bash", "description": "b", "input_schema": {}},
    ]
    parent = ModelRequest(
        model="m",
        system=["a", "b"],
        tools=tools,
        max_tokens=100,
        messages=[Message.user("hi"), Message("assistant", [TextBlock("yo")])],
    )
    same = ModelRequest(
        model="m",
        system=["a", "b"],
        tools=copy.deepcopy(tools),
        max_tokens=100,
        messages=[*parent.messages, Message.user("task")],
        purpose="extract",
    )
    assert prefix_mismatches(parent, same) == []
    assert prefix_mismatches(None, same) == []
    changed_tool = copy.deepcopy(tools)
    changed_tool[1]["description"] = "other"
    fewer = ModelRequest(
        model="m2",
        system=["a", "B"],
        tools=tools[:1],
        max_tokens=50,
        messages=[Message.user("hello")],
        thinking={"type": "enabled"},
    )
    problems = " | ".join(prefix_mismatches(parent, fewer))
    for word in (
        "model",
        "max_tokens",
        "thinking",
        "tools: 2 vs 1 entries (Read, Bash vs Read)",
        "system: blocks changed (index): 1",
        "messages: block 0",
    ):
        assert word in problems
    edited = ModelRequest(
        model="m", system=["a", "b"], tools=changed_tool, max_tokens=100, messages=list(parent.messages)
    )
    assert prefix_mismatches(parent, edited) == ["tools: tool definitions changed: Bash"]


def test_cache_guard_logs_a_mismatch_before_sending(workdir, fake_server, caplog):
    fake_server.on(Reply.text("ok"), purpose="main")
    fake_server.on(Reply.text("done"), purpose="extract")

    tools = 0

    async def go():
        nonlocal tools
        agent = make_agent(workdir, fake_server)
        await turn(agent, "hi")
        tools = len(agent.tool_specs)
        agent.max_tokens = 16000  # e.g. a setting changed after the parent's request
        agent.tool_specs = agent.tool_specs[:-1]
        with caplog.at_level(logging.WARNING, logger="claude_mini.agent.fork"):
            result = await run_fork(agent, "task", purpose="extract", policy=NO_TOOLS)
        await agent.client.aclose()
        return result

    result = run(go())
    assert any("cache-prefix mismatch (extract fork)" in r.getMessage() for r in caplog.records)
    text = caplog.text
    assert "max_tokens 32000 != 16000" in text and f"tools: {tools} vs {tools - 1} entries" in text
    assert len(result.mismatches) == 2
    assert fake_server.requests_for("extract")[0].usage["cache_read_input_tokens"] == 0


def test_a_failed_fork_raises_and_keeps_what_it_did(workdir, fake_server):
    fake_server.on(Reply.text("ok"), purpose="main")
    fake_server.on(Reply.tool("Write", {"file_path": "made.txt", "content": "x\n"}), purpose="dream")
    fake_server.on(Reply.error(400, "invalid request"), purpose="dream")

    async def go():
        agent = make_agent(workdir, fake_server)
        await turn(agent, "hi")
        fork = Fork(agent, purpose="dream", policy=AllowAll())
        with pytest.raises(InvalidRequest):
            await fork.run("write a file")
        await agent.client.aclose()
        return fork

    fork = run(go())
    assert fork.result.written == [workdir / "made.txt"] and fork.result.turns == 1


def test_messages_override_replaces_the_parents_messages(workdir, fake_server, caplog):
    """Compaction's retry without the oldest rounds: the override is sent, the guard says so."""
    fake_server.on(Reply.text("first"), purpose="main")
    fake_server.on(Reply.text("second"), purpose="main")
    fake_server.on(Reply.text("<summary>s</summary>"), purpose="compact")

    async def go():
        agent = make_agent(workdir, fake_server)
        await turn(agent, "one")
        await turn(agent, "two")
        kept = agent.session.messages[2:]
        snapshot = ForkSnapshot.of(agent)
        with caplog.at_level(logging.WARNING, logger="claude_mini.agent.fork"):
            result = await run_fork(
                snapshot, "summarise", purpose="compact", policy=NO_TOOLS, max_turns=1, messages=kept
            )
        await agent.client.aclose()
        return result

    result = run(go())
    body = fake_server.requests_for("compact")[0].body
    assert [m["content"][0]["text"] for m in body["messages"]] == ["two", "second", "summarise"]
    assert result.mismatches and "messages: block 0" in result.mismatches[0]


class NoWrites:
    """Allows every call but Write (a policy for the tool-check test)."""

    def can_use_tool(self, tool_name: str, input: dict[str, Any]) -> Any:
        return Deny("no writes") if tool_name == "Write" else Allow()


def test_the_parents_tool_check_vets_allowed_calls_and_may_rewrite_them(workdir, fake_server):
    fake_server.on(Reply.text("ok"), purpose="main")
    fake_server.on(
        Reply.tools(
            [
                ("Bash", {"command": "echo original > a.txt"}),
                ("Bash", {"command": "touch b.txt"}),
                ("Write", {"file_path": "c.txt", "content": "c"}),
            ]
        ),
        purpose="extract",
    )
    fake_server.on(Reply.text("done"), purpose="extract")
    seen: list[str] = []

    async def check(call: Any) -> ToolVerdict | None:  # as the user's PreToolUse hooks would
        seen.append(call.input.get("command", call.name))
        if "original" in call.input.get("command", ""):
            return ToolVerdict(updated_input={"command": "echo rewritten > a.txt"})
        return ToolVerdict(Deny("PreToolUse:Bash hook error: no touching"))

    async def go():
        agent = make_agent(workdir, fake_server)
        agent.fork_tool_check = check
        await turn(agent, "hi")
        result = await run_fork(agent, "work", purpose="extract", policy=NoWrites())
        await agent.client.aclose()
        return result

    result = run(go())
    assert (workdir / "a.txt").read_text() == "rewritten\n"
    assert not (workdir / "b.txt").exists() and not (workdir / "c.txt").exists()
    assert seen == ["echo original > a.txt", "touch b.txt"]  # the policy refused Write first
    touch, write = (r.result.content for r in result.denials)
    assert touch == "Permission denied: PreToolUse:Bash hook error: no touching"
    assert "no writes" in write
