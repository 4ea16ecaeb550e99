"""The user's hooks as the runtime wires them (runtime.user_hooks): a lifecycle part only when a
hook is configured, first in the order, and the forks' tool check only when
`memory.hooksInForks` asks for it."""

from __future__ import annotations

import json
from pathlib import Path

from claude_mini.config import load_config
from claude_mini.hooks.lifecycle import UserHooks
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
