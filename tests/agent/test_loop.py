"""The agent loop (agent/loop.py) through the real SDK and the fake server: --max-turns, the one
shrink-and-retry on "prompt is too long", read-only calls run together, cancelling (the
interruption marker), unusable tool input, and a failed turn leaving the conversation valid."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from claude_mini.agent.events import ToolFinished, ToolStarted, TurnDone
from claude_mini.agent.lifecycle import Lifecycle, Part, ToolVerdict
from claude_mini.agent.loop import (
    CANCELLED,
    INTERRUPTED,
    INTERRUPTED_FOR_TOOL_USE,
    Agent,
    MaxTurnsReached,
    PermissionAnswer,
    PromptBlocked,
    TurnCancelled,
    TurnDeclined,
    unusable_input,
)
from claude_mini.llm.anthropic_client import AnthropicClient
from claude_mini.llm.messages import TextBlock, ToolResultBlock
from claude_mini.llm.protocol import ContextTooLong
from claude_mini.permissions import Allow, Ask, Deny
from claude_mini.session import UNFINISHED_TOOL, Session
from claude_mini.tools.base import ToolContext
from claude_mini.tools.registry import default_tools
from tests.fake_anthropic import Reply


class AllowAll:
    """These tests are about the loop, not the rules."""

    def can_use_tool(self, tool_name: str, input: dict[str, Any]) -> Allow:
        return Allow()


class Shrinker(Part):
    """Stands in for compaction: drops the oldest messages when the API says the prompt is too long."""

    def __init__(self) -> None:
        self.calls = 0

    async def on_context_too_long(self, agent: Agent) -> bool:
        self.calls += 1
        agent.session.messages[:] = agent.session.messages[-1:]
        return True


def make_agent(cwd: Path, server, **options: Any) -> Agent:
    client = AnthropicClient(base_url=server.base_url, api_key="test")
    return Agent(
        client=client,
        session=Session(cwd),
        tools=default_tools(),
        policy=AllowAll(),
        system=["You are a test agent."],
        model="claude-sonnet-4-6",
        ctx=ToolContext(cwd=cwd, project_root=cwd),
        **options,
    )


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
    agent = make_agent(workdir, fake_server, lifecycle=Lifecycle([shrinker]))
    fake_server.queue(Reply.error(400, "prompt is too long: 250000 tokens > 200000 maximum"), Reply.text("fits now"))
    events = asyncio.run(events_of(agent, "hello"))
    assert isinstance(events[-1], TurnDone) and shrinker.calls == 1
    assert len(fake_server.requests_for("main")) == 2


def test_a_second_prompt_too_long_in_one_turn_is_an_error_that_says_what_to_do(workdir, fake_server) -> None:
    shrinker = Shrinker()
    agent = make_agent(workdir, fake_server, lifecycle=Lifecycle([shrinker]))
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


def cancel_when(agent: Agent, text: str, ready: Any) -> None:
    """Run a turn and cancel its task (as Esc or Ctrl-C do) once `ready()` is true."""

    async def go() -> None:
        task = asyncio.create_task(events_of(agent, text))
        while not ready():
            await asyncio.sleep(0.02)
        task.cancel()
        with pytest.raises(TurnCancelled):
            await task

    asyncio.run(go())


def transcript_messages(agent: Agent) -> list[dict[str, Any]]:
    lines = agent.session.transcript.path.read_text().splitlines()
    return [entry["message"] for entry in map(json.loads, lines) if entry["type"] in ("user", "assistant")]


def test_cancelling_mid_tool_marks_the_call_and_keeps_the_conversation_valid(workdir, fake_server) -> None:
    agent = make_agent(workdir, fake_server)
    fake_server.queue(Reply.tool("Bash", {"command": "touch started && sleep 30"}), Reply.text("never sent"))
    cancel_when(agent, "wait", (workdir / "started").exists)
    result, marker = agent.session.messages[-1].content
    assert isinstance(result, ToolResultBlock) and result.is_error and result.content == CANCELLED
    assert marker == TextBlock(INTERRUPTED_FOR_TOOL_USE)
    assert answered(agent)
    assert len(fake_server.requests_for("main")) == 1
    assert transcript_messages(agent)[-1]["content"][-1] == {"type": "text", "text": INTERRUPTED_FOR_TOOL_USE}


def test_cancelling_while_the_model_answers_marks_the_request_as_interrupted(workdir, fake_server) -> None:
    agent = make_agent(workdir, fake_server)
    fake_server.queue(Reply.text("never arrives").hang())
    cancel_when(agent, "take your time", lambda: fake_server.requests_for("main"))
    assert [m.role for m in agent.session.messages] == ["user"]
    assert agent.session.messages[0].content == [TextBlock("take your time"), TextBlock(INTERRUPTED)]
    assert transcript_messages(agent)[-1] == {"role": "user", "content": [{"type": "text", "text": INTERRUPTED}]}
    asyncio.run(events_of(agent, "are you there"))  # the next request says the first was dropped
    sent = fake_server.requests_for("main")[-1].body["messages"][0]["content"]
    assert [block["text"] for block in sent] == ["take your time", INTERRUPTED, "are you there"]


class SlowTurnEnd(Part):
    """A lifecycle part that takes its time once the answer is complete."""

    def __init__(self) -> None:
        self.reached = asyncio.Event()

    async def on_turn_end(self, agent: Agent, done: TurnDone) -> None:
        self.reached.set()
        await asyncio.Event().wait()


def test_cancelling_after_the_answer_is_complete_records_no_interruption(workdir, fake_server) -> None:
    hook = SlowTurnEnd()
    agent = make_agent(workdir, fake_server, lifecycle=Lifecycle([hook]))
    fake_server.queue(Reply.text("All done."))

    async def go() -> None:
        task = asyncio.create_task(events_of(agent, "finish"))
        await hook.reached.wait()
        task.cancel()  # Esc just after the answer: only the hook is cut
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(go())
    assert [m.role for m in agent.session.messages] == ["user", "assistant"]
    assert transcript_messages(agent)[-1] == {"role": "assistant", "content": [{"type": "text", "text": "All done."}]}


def test_a_nul_byte_or_lone_surrogate_in_a_tool_input_is_refused_with_a_reason(workdir, fake_server) -> None:
    agent = make_agent(workdir, fake_server)
    fake_server.queue(
        Reply.tools(
            [
                ("Read", {"file_path": "a\x00.txt"}),
                ("Write", {"file_path": "b.txt", "content": "x\x00y"}),
                ("Grep", {"pattern": "alpha"}),
            ]
        ),
        Reply.text("done"),
    )
    events = asyncio.run(events_of(agent, "go"))
    assert isinstance(events[-1], TurnDone)
    read, write, grep = fake_server.requests_for("main")[-1].body["messages"][-1]["content"][:3]
    assert read["is_error"] and "`file_path` contains a NUL byte at position 1" in read["content"]
    assert write["is_error"] and "`content` contains a NUL byte" in write["content"]
    assert (workdir / "b.txt").read_text() == "beta\n"
    assert not grep.get("is_error") and "a.txt" in grep["content"]
    # The Anthropic client already turns a lone surrogate into U+FFFD; other clients may not.
    assert "a lone surrogate (U+DC1B)" in (unusable_input({"edits": [{"old": "x\udc1b"}]}) or "")
    assert unusable_input({"command": "ls", "n": 3, "paths": ["a", None]}) is None


class Broken(Part):
    """A lifecycle part with a bug: it fails after the first tool ran."""

    async def after_tool(self, agent: Any, call: Any, result: Any) -> list[str]:
        raise RuntimeError("bug in a hook")


def test_a_turn_that_fails_mid_tools_leaves_every_tool_use_answered(workdir, fake_server) -> None:
    agent = make_agent(workdir, fake_server, lifecycle=Lifecycle([Broken()]))
    calls = [("Read", {"file_path": str(workdir / name)}) for name in ("a.txt", "b.txt")]
    calls.append(("Write", {"file_path": str(workdir / "c.txt"), "content": "c"}))
    fake_server.queue(Reply.tools(calls), Reply.text("never sent"))
    with pytest.raises(RuntimeError, match="bug in a hook"):
        asyncio.run(events_of(agent, "read both, then write"))
    assert answered(agent)
    first, second, write = agent.session.messages[-1].content
    # Both reads ran (one batch) before the hook failed: both keep their real results.
    assert not first.is_error and "alpha" in first.content and "beta" in second.content
    assert write == ToolResultBlock(write.tool_use_id, UNFINISHED_TOOL, is_error=True)
    assert not (workdir / "c.txt").exists()
    agent.lifecycle = Lifecycle()
    asyncio.run(events_of(agent, "go on"))  # the next request is one the API accepts
    sent = fake_server.requests_for("main")[-1].body["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert {b["tool_use_id"] for b in sent[2]["content"] if b["type"] == "tool_result"} == {
        b["id"] for b in sent[1]["content"] if b["type"] == "tool_use"
    }


class Gate(Part):
    """A lifecycle part with an opinion on tool calls (as the user's PreToolUse hooks will be)."""

    def __init__(self, verdicts: dict[str, Any]) -> None:
        self.verdicts = verdicts
        self.seen: list[str] = []

    async def before_tool(self, agent: Agent, call: Any) -> Any:
        self.seen.append(call.name)
        return ToolVerdict(self.verdicts[call.name]) if call.name in self.verdicts else None


class AskAll:
    """Rules that would ask the user for everything; Bash(rm) is denied outright."""

    def can_use_tool(self, tool_name: str, input: dict[str, Any]) -> Any:
        if "rm " in str(input.get("command", "")):
            return Deny("rm is denied by a rule")
        return Ask("a rule asks")


def test_before_tool_can_deny_or_spare_a_question_but_not_lift_a_deny_rule(workdir, fake_server) -> None:
    gate = Gate({"Read": Allow(), "Glob": Deny("the hook says no"), "Bash": Allow()})
    agent = make_agent(workdir, fake_server, lifecycle=Lifecycle([gate]))
    agent.policy = AskAll()  # no ask_user: an Ask ends as "permission needed"
    fake_server.queue(
        Reply.tools(
            [
                ("Read", {"file_path": str(workdir / "a.txt")}),
                ("Glob", {"pattern": "*.txt"}),
                ("Bash", {"command": "rm a.txt"}),
                ("Grep", {"pattern": "alpha"}),
            ]
        ),
        Reply.text("done"),
    )
    asyncio.run(events_of(agent, "go"))
    results = fake_server.requests_for("main")[-1].body["messages"][-1]["content"]
    read, glob, bash, grep = (r["content"] for r in results[:4])
    assert "alpha" in read  # the hook's Allow spared the question
    assert glob == "Permission denied: the hook says no"
    assert bash == "Permission denied: rm is denied by a rule" and (workdir / "a.txt").exists()
    assert grep.startswith("Permission needed to run Grep")  # no opinion: the rules decide
    assert gate.seen == ["Read", "Glob", "Bash", "Grep"]


class AsksForEdits:
    """Reads run; Write and Edit ask (as in the default mode)."""

    def can_use_tool(self, tool_name: str, input: dict[str, Any]) -> Any:
        return Allow() if tool_name == "Read" else Ask("edits need approval")


def test_an_edit_that_cannot_apply_fails_without_asking_the_user(workdir, fake_server) -> None:
    asked: list[str] = []

    async def ask_user(call: Any, reason: str) -> PermissionAnswer:
        asked.append(call.input["file_path"])
        return PermissionAnswer(allow=True)

    agent = make_agent(workdir, fake_server, ask_user=ask_user)
    agent.policy = AsksForEdits()
    a, b = str(workdir / "a.txt"), str(workdir / "b.txt")
    fake_server.queue(
        Reply.tools(
            [
                ("Edit", {"file_path": a, "old_string": "alpha", "new_string": "A"}),  # not read yet
                ("Write", {"file_path": b, "content": "B\n"}),  # over a file not read
                ("Read", {"file_path": a}),
            ]
        ),
        Reply.tools(
            [
                ("Edit", {"file_path": a, "old_string": "gamma", "new_string": "G"}),  # not found
                ("Edit", {"file_path": a, "old_string": "alpha", "new_string": "A"}),
            ]
        ),
        Reply.text("done"),
    )
    asyncio.run(events_of(agent, "change them"))
    first, second = (r.body["messages"][-1]["content"] for r in fake_server.requests_for("main")[1:])
    assert "has not been read in this session" in first[0]["content"] and first[0]["is_error"]
    assert "has not been read in this session" in first[1]["content"] and first[1]["is_error"]
    assert "old_string was not found" in second[0]["content"] and second[0]["is_error"]
    assert asked == [a]  # only the edit that could apply was put to the user
    assert (workdir / "a.txt").read_text() == "A\n" and (workdir / "b.txt").read_text() == "beta\n"


class Rewriter(Part):
    """Rewrites every Bash command (as a PreToolUse hook's `updatedInput` does)."""

    async def before_tool(self, agent: Agent, call: Any) -> Any:
        return ToolVerdict(updated_input={"command": "echo rewritten"}) if call.name == "Bash" else None


class DenyRewrites:
    """Allows everything but the rewritten command: the rules judge what will really run."""

    def can_use_tool(self, tool_name: str, input: dict[str, Any]) -> Any:
        return Deny("no echo") if "rewritten" in str(input.get("command", "")) else Allow()


def test_a_rewritten_input_is_what_runs_and_what_the_rules_judge(workdir, fake_server) -> None:
    agent = make_agent(workdir, fake_server, lifecycle=Lifecycle([Rewriter()]))
    fake_server.queue(
        Reply.tools([("Bash", {"command": "echo original"})]),
        Reply.text("done"),
        Reply.tools([("Bash", {"command": "echo original"})]),
        Reply.text("done"),
    )

    async def two_turns() -> None:
        await events_of(agent, "go")
        agent.policy = DenyRewrites()
        await events_of(agent, "again")

    asyncio.run(two_turns())
    first, second = (r.body["messages"][-1]["content"][0] for r in fake_server.requests_for("main")[1::2])
    assert "rewritten" in first["content"] and "original" not in first["content"]
    assert second["content"] == "Permission denied: no echo" and second["is_error"]


class AskRule:
    """An explicit ask rule for every call."""

    def can_use_tool(self, tool_name: str, input: dict[str, Any]) -> Any:
        return Ask("an ask rule", by_rule=True)


class AskProtected:
    """The question for a file that controls git (a safety question, not a rule)."""

    def can_use_tool(self, tool_name: str, input: dict[str, Any]) -> Any:
        return Ask(".git/hooks/pre-commit controls git", protected=True)


@pytest.mark.parametrize("policy", [AskRule(), AskProtected()], ids=["ask rule", "protected file"])
def test_a_hooks_allow_does_not_lift_an_ask_rule_or_a_safety_question(workdir, fake_server, policy) -> None:
    agent = make_agent(workdir, fake_server, lifecycle=Lifecycle([Gate({"Read": Allow()})]))
    agent.policy = policy
    fake_server.queue(Reply.tools([("Read", {"file_path": str(workdir / "a.txt")})]), Reply.text("done"))
    asyncio.run(events_of(agent, "go"))
    result = fake_server.requests_for("main")[-1].body["messages"][-1]["content"][0]
    assert result["content"].startswith("Permission needed to run Read")


class StopOnce(Part):
    """Makes the model go on once (a Stop hook that checks stop_hook_active)."""

    def __init__(self) -> None:
        self.seen: list[int] = []

    async def before_turn_end(self, agent: Agent, continued: int) -> str | None:
        self.seen.append(continued)
        return "Run the tests before you stop." if continued == 0 else None


def test_before_turn_end_makes_the_model_go_on_with_the_reason(workdir, fake_server) -> None:
    stop = StopOnce()
    agent = make_agent(workdir, fake_server, lifecycle=Lifecycle([stop]))
    fake_server.queue(Reply.text("first answer"), Reply.text("tests pass"))
    events = asyncio.run(events_of(agent, "go"))
    assert isinstance(events[-1], TurnDone) and events[-1].requests == 2
    assert stop.seen == [0, 1]
    second = fake_server.requests_for("main")[-1].body["messages"]
    assert [m["role"] for m in second] == ["user", "assistant", "user"]
    assert second[-1]["content"][0]["text"] == "<system-reminder>\nRun the tests before you stop.\n</system-reminder>"


class Refuser(Part):
    async def on_turn_start(self, agent: Agent, text: str) -> None:
        raise PromptBlocked("not this prompt")


def test_a_blocked_prompt_never_joins_the_conversation(workdir, fake_server) -> None:
    agent = make_agent(workdir, fake_server, lifecycle=Lifecycle([Refuser()]))
    with pytest.raises(PromptBlocked, match="not this prompt"):
        asyncio.run(events_of(agent, "secret plans"))
    assert agent.session.messages == [] and fake_server.requests_for("main") == []


def test_a_stop_hook_is_not_asked_when_max_turns_leaves_no_request(workdir, fake_server) -> None:
    stop = StopOnce()
    agent = make_agent(workdir, fake_server, lifecycle=Lifecycle([stop]), max_turns=1)
    fake_server.queue(Reply.text("the only answer"))
    events = asyncio.run(events_of(agent, "go"))
    assert isinstance(events[-1], TurnDone) and stop.seen == []


class AsksForBash:
    def can_use_tool(self, tool_name: str, input: dict[str, Any]) -> Any:
        return Ask("commands need approval") if tool_name in ("Bash", "ExitPlanMode") else Allow()


def test_no_stops_the_turn_and_answers_every_call_of_the_response(workdir, fake_server) -> None:
    async def ask_user(call: Any, reason: str) -> PermissionAnswer:
        return PermissionAnswer(allow=False)

    agent = make_agent(workdir, fake_server, ask_user=ask_user)
    agent.policy = AsksForBash()
    fake_server.queue(
        Reply.tools([("Bash", {"command": "touch made.txt"}), ("Read", {"file_path": str(workdir / "a.txt")})]),
        Reply.text("never asked for"),
    )
    with pytest.raises(TurnDeclined, match="Say what to do instead"):
        asyncio.run(events_of(agent, "make it"))
    assert len(fake_server.requests_for("main")) == 1  # the model is not asked again in this turn
    assert answered(agent) and not (workdir / "made.txt").exists()
    results = agent.session.messages[-1].content
    assert "declined this Bash call" in results[0].content and "wait" in results[0].content
    assert results[1].content.startswith("Not run (or stopped unfinished): the user declined a call")
    assert results[2].text == "[Request interrupted by user for tool use]"
    fake_server.queue(Reply.text("Understood."))
    asyncio.run(events_of(agent, "do something else"))  # the conversation goes on from there
    sent = json.dumps(fake_server.requests_for("main")[-1].body["messages"])
    assert "declined this Bash call" in sent and "do something else" in sent


def test_no_with_what_to_do_instead_goes_on_with_the_users_words(workdir, fake_server) -> None:
    async def ask_user(call: Any, reason: str) -> PermissionAnswer:
        return PermissionAnswer(allow=False, message="use make instead")

    agent = make_agent(workdir, fake_server, ask_user=ask_user)
    agent.policy = AsksForBash()
    fake_server.queue(Reply.tool("Bash", {"command": "touch made.txt"}), Reply.text("Using make."))
    events = asyncio.run(events_of(agent, "make it"))
    assert isinstance(events[-1], TurnDone)
    sent = fake_server.requests_for("main")[-1].body["messages"][-1]["content"][0]
    assert sent["is_error"] and "The user said: use make instead" in sent["content"]


def test_a_plan_nobody_can_approve_ends_the_turn_unmarked(workdir, fake_server) -> None:
    agent = make_agent(workdir, fake_server)  # no ask_user: -p
    agent.policy = AsksForBash()
    fake_server.queue(Reply.tool("ExitPlanMode", {"plan": "1. Do it"}), Reply.text("never asked for"))
    with pytest.raises(TurnDeclined):
        asyncio.run(events_of(agent, "plan it"))
    [result] = agent.session.messages[-1].content
    assert result.is_error and "non-interactive" in result.content
    assert len(fake_server.requests_for("main")) == 1
