"""The user's hooks as the runtime wires them (runtime.user_hooks): a lifecycle part only when a
hook is configured, first in the order, and the forks' tool check only when
`memory.hooksInForks` asks for it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from claude_mini.agent.permissions import Deny
from claude_mini.config import load_config
from claude_mini.hooks.lifecycle import UserHooks
from claude_mini.llm.messages import ToolUseBlock
from claude_mini.runtime import build_runtime
from tests.ui.conftest import StubClient

HOOKS = {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "true"}]}]}


def runtime_with(repo: Path, isolated_env, settings: dict):
    (isolated_env.home / "settings.json").write_text(json.dumps(settings))  # the user's: no trust needed
    return build_runtime(load_config(repo), client=StubClient())


def test_no_hooks_configured_means_no_part_and_no_fork_check(repo, isolated_env):
    runtime = runtime_with(repo, isolated_env, {})
    assert not any(isinstance(h, UserHooks) for h in runtime.hooks)
    assert runtime.agent.fork_tool_check is None


def test_configured_hooks_come_first_and_forks_skip_them_by_default(repo, isolated_env):
    runtime = runtime_with(repo, isolated_env, {"hooks": HOOKS})
    assert isinstance(runtime.hooks[0], UserHooks)
    assert runtime.agent.fork_tool_check is None


def test_hooks_in_forks_gives_forks_the_pre_tool_check(repo, isolated_env):
    runtime = runtime_with(repo, isolated_env, {"hooks": HOOKS, "memory": {"hooksInForks": True}})
    assert runtime.agent.fork_tool_check is not None


def test_a_forks_pre_tool_use_context_stays_out_of_the_users_conversation(repo, isolated_env):
    said = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                   "permissionDecisionReason": "not in the background",
                                   "additionalContext": "FORK-ONLY NOTE"}}
    settings = {"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": f"echo '{json.dumps(said)}'"}]}]},
                "memory": {"hooksInForks": True}}
    runtime = runtime_with(repo, isolated_env, settings)
    check = runtime.agent.fork_tool_check
    assert check is not None
    verdict = asyncio.run(check(ToolUseBlock("toolu_1", "Write", {"file_path": "x.md", "content": "x"})))
    assert isinstance(verdict.decision, Deny) and "not in the background" in verdict.decision.reason
    assert runtime.hooks[0].attachments() == []  # the note was for the fork's call, not the user's turn
