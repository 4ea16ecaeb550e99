"""The user's hooks as the runtime wires them (hooks.lifecycle.part): a lifecycle part only when a
hook is configured, first in the order, and the forks' tool check only when
`memory.hooksInForks` asks for it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from claude_mini.config import load_config
from claude_mini.hooks.lifecycle import UserHooksPart
from claude_mini.llm.messages import ToolUseBlock
from claude_mini.permissions import Deny
from claude_mini.runtime import build_runtime
from tests.ui.conftest import StubClient

HOOKS = {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "true"}]}]}


def runtime_with(repo: Path, isolated_env, settings: dict):
    (isolated_env.home / "settings.json").write_text(json.dumps(settings))  # the user's: no trust needed
    return build_runtime(load_config(repo), client=StubClient())


def test_no_hooks_configured_means_no_part_and_no_fork_check(repo, isolated_env):
    runtime = runtime_with(repo, isolated_env, {})
    assert not any(isinstance(h, UserHooksPart) for h in runtime.lifecycle.parts)
    assert runtime.agent.fork_tool_check is None


def test_configured_hooks_come_first_and_forks_skip_them_by_default(repo, isolated_env):
    runtime = runtime_with(repo, isolated_env, {"hooks": HOOKS})
    assert isinstance(runtime.lifecycle.parts[0], UserHooksPart)
    assert runtime.agent.fork_tool_check is None


def test_hooks_in_forks_gives_forks_the_pre_tool_check(repo, isolated_env):
    runtime = runtime_with(repo, isolated_env, {"hooks": HOOKS, "memory": {"hooksInForks": True}})
    assert runtime.agent.fork_tool_check is not None


def test_a_forks_pre_tool_use_context_stays_out_of_the_users_conversation(repo, isolated_env):
    said = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "not in the background",
            "additionalContext": "FORK-ONLY NOTE",
        }
    }
    settings = {
        "hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": f"echo '{json.dumps(said)}'"}]}]},
        "memory": {"hooksInForks": True},
    }
    runtime = runtime_with(repo, isolated_env, settings)
    check = runtime.agent.fork_tool_check
    assert check is not None
    verdict = asyncio.run(check(ToolUseBlock("toolu_1", "Write", {"file_path": "x.md", "content": "x"})))
    assert isinstance(verdict.decision, Deny) and "not in the background" in verdict.decision.reason
    assert runtime.lifecycle.parts[0].attachments() == []  # the note was for the fork's call, not the user's turn


LOGGER = (
    """python3 -c 'import json,sys,os; d=json.load(sys.stdin); """
    """open(os.environ["HOOK_LOG"],"a").write(json.dumps([d["hook_event_name"], """
    """d.get("source") or d.get("reason"), d["session_id"]])+"\\n"); print("CTX-" + str(d.get("source")))'"""
)


def logging_runtime(repo, isolated_env, monkeypatch, *events):
    log = repo / "hook.log"
    monkeypatch.setenv("HOOK_LOG", str(log))
    hooks = {event: [{"hooks": [{"type": "command", "command": LOGGER}]}] for event in events}
    return runtime_with(repo, isolated_env, {"hooks": hooks}), log


def lines(log: Path) -> list[list[str]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def test_a_first_prompt_before_start_up_ends_runs_session_start_once_and_carries_its_context(
    repo, isolated_env, monkeypatch
):
    runtime, log = logging_runtime(repo, isolated_env, monkeypatch, "SessionStart")
    hooks, agent = runtime.lifecycle.parts[0], runtime.agent

    async def go():
        await hooks.on_turn_start(agent, "hi")  # the REPL's prompt, while maintenance still runs
        first = hooks.attachments()
        await hooks.on_session_start(agent, "startup")  # maintenance reaches its lifecycle call
        return first

    first = asyncio.run(go())
    assert [entry[:2] for entry in lines(log)] == [["SessionStart", "startup"]]
    assert first == ["SessionStart:startup hook additional context: CTX-startup"]
    assert hooks.attachments() == []


def test_two_clears_in_a_row_end_and_start_each_conversation_in_order(repo, isolated_env, monkeypatch):
    runtime, log = logging_runtime(repo, isolated_env, monkeypatch, "SessionStart", "SessionEnd")
    hooks, agent = runtime.lifecycle.parts[0], runtime.agent
    from claude_mini.session import Session

    async def go():
        await runtime.start(source="startup", dream=False)
        ids = [runtime.session.id]
        for _ in range(2):
            runtime.switch_session(Session(repo), "clear")
            ids.append(runtime.session.id)
        await hooks.on_turn_start(agent, "hello")
        return ids

    a, b, c = asyncio.run(go())
    assert lines(log) == [
        ["SessionStart", "startup", a],
        ["SessionEnd", "clear", a],
        ["SessionStart", "clear", b],
        ["SessionEnd", "clear", b],
        ["SessionStart", "clear", c],
    ]
    assert hooks.attachments() == ["SessionStart:clear hook additional context: CTX-clear"]  # C's, once


def test_a_forks_check_leaves_async_and_once_hooks_to_the_users_session(repo, isolated_env, monkeypatch):
    log = repo / "hook.log"
    monkeypatch.setenv("HOOK_LOG", str(log))
    handlers = [
        {"type": "command", "command": LOGGER, "async": True},
        {"type": "command", "command": LOGGER + " # once", "once": True},
    ]
    settings = {"hooks": {"PreToolUse": [{"hooks": handlers}]}, "memory": {"hooksInForks": True}}
    runtime = runtime_with(repo, isolated_env, settings)
    hooks, agent = runtime.lifecycle.parts[0], runtime.agent
    call = ToolUseBlock("toolu_1", "Read", {"file_path": "app.py"})

    async def go():
        assert await agent.fork_tool_check(call) is None
        await asyncio.sleep(0.2)  # an async hook, had one started, would have logged by now
        assert lines(log) == [] and hooks.attachments() == []
        await hooks.before_tool(agent, call)  # the user's own call: both run, the once one for good
        await hooks.on_session_end(agent)  # waits for the async one
        await hooks.before_tool(agent, call)
        await hooks.on_session_end(agent)

    asyncio.run(go())
    assert [entry[0] for entry in lines(log)] == ["PreToolUse", "PreToolUse", "PreToolUse"]
