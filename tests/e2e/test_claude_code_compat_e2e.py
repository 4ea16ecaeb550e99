"""Drop-in fidelity: a repository's `.claude/` in Claude Code's formats, through the real CLI.

Each case of compat_cases.py is one print-mode run against the fake server; what reached the model
(or the hooks, or the disk) must be what Claude Code 2.1.197 gave on the same run
(scripts/compat_claude_code.py runs them through Claude Code itself).
"""

from __future__ import annotations

import json

import pytest

from tests.e2e.compat_cases import CASES, TITLE_RULE, USER_SETTINGS, Case, Run, write_repository
from tests.e2e.conftest import trust_folder


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_claude_code_fixture_reaches_the_model_as_claude_code_sends_it(
    case: Case, run_cli, fake_server, repo, isolated_env
):
    write_repository(repo)
    trust_folder(isolated_env.home, repo)
    (isolated_env.home / "settings.json").write_text(json.dumps(USER_SETTINGS))
    fake_server.load_script({"replies": case.replies, "rules": [TITLE_RULE]})
    result = run_cli("-p", case.prompt, env={"CLAUDE_MINI_DISABLE_AUTO_MEMORY": "1"}, timeout=120)
    assert result.returncode == 0, result.stderr
    run = Run(repo, [r.body for r in fake_server.requests if r.path == "/v1/messages"], result.stdout, result.stderr)
    assert case.observe(run) == case.expect
    # Keys other tools add (`color`, `category`, `displayName`) and YAML claude-mini read line by
    # line are --debug lines, not warnings on every start.
    assert "category" not in result.stderr and "not valid YAML" not in result.stderr


def test_a_debug_run_names_each_lenient_reading_and_each_key_not_applied(run_cli, fake_server, repo, isolated_env):
    write_repository(repo)
    trust_folder(isolated_env.home, repo)
    fake_server.load_script({"replies": [{"text": "ok"}], "rules": [TITLE_RULE]})
    result = run_cli("-p", "hello", "--debug", env={"CLAUDE_MINI_DISABLE_AUTO_MEMORY": "1"})
    assert result.returncode == 0, result.stderr
    assert "Command .claude/commands/git/commit.md: frontmatter is not valid YAML" in result.stderr
    assert "read line by line" in result.stderr
    assert "Agent .claude/agents/reviewer.md: keys not applied by claude-mini: color, category, displayName" in (
        result.stderr
    )


def test_an_untrusted_folder_gets_no_env_no_agent_grants_and_no_agent_hooks(run_cli, fake_server, repo, isolated_env):
    write_repository(repo)
    (isolated_env.home / "settings.json").write_text(json.dumps(USER_SETTINGS))
    review = next(c for c in CASES if c.name == "tool rule")
    fake_server.load_script({"replies": review.replies, "rules": [TITLE_RULE]})
    result = run_cli("-p", review.prompt, env={"CLAUDE_MINI_DISABLE_AUTO_MEMORY": "1"}, timeout=120)
    assert result.returncode == 0, result.stderr
    run = Run(repo, [r.body for r in fake_server.requests if r.path == "/v1/messages"])
    assert review.observe(run) is False  # the type's `Bash(python3:*)` grants nothing untrusted
    assert "thinking" not in run.bodies[0]  # the project's env (MAX_THINKING_TOKENS) is not applied
    assert run.hooklog() == []
