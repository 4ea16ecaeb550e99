"""/memory promote|demote|blame|import and `list --tier team` in the REPL: the same actions as
`claude-mini memory`, on the live runtime."""

from __future__ import annotations

import subprocess

import pytest

from claude_mini import trust
from claude_mini.config import load_config
from claude_mini.runtime import build_runtime
from tests.ui.conftest import StubClient


@pytest.fixture
def trusted_runtime(repo):
    subprocess.run(["git", "config", "user.name", "Ada Lovelace"], cwd=repo, check=True)
    trust.record_trust(repo)
    return build_runtime(load_config(repo), client=StubClient())


def test_promote_list_blame_and_demote_from_the_repl(slash, trusted_runtime, repo):
    slash.runtime.config, slash.runtime.store = trusted_runtime.config, trusted_runtime.store
    slash.run("/memory add The staging database is reset every Monday at 06:00 UTC --type project")
    out = slash.run("/memory promote the-staging-database-is-reset-every-monday")
    assert "Promoted the-staging-database-is-reset-every-monday.md to the team memory" in out
    assert (repo / ".claude" / "memory" / "the-staging-database-is-reset-every-monday.md").is_file()
    listed = slash.run("/memory list --tier team")
    assert "(Ada Lovelace, " in listed and "[uncommitted]" in listed
    assert "not committed yet" in slash.run("/memory blame the-staging-database-is-reset-every-monday")
    out = slash.run("/memory demote the-staging-database-is-reset-every-monday")
    assert "Demoted .claude/memory/the-staging-database-is-reset-every-monday.md" in out
    assert not (repo / ".claude" / "memory" / "the-staging-database-is-reset-every-monday.md").exists()


def test_repl_team_actions_explain_what_is_missing(slash):
    assert "needs a memory name" in slash.run("/memory promote")
    assert "/memory import needs --from claude-code|codex|gemini" in slash.run("/memory import")
    out = slash.run("/memory promote nothing-here")  # the fixture's folder is not trusted
    assert "cannot promote nothing-here: this folder is not trusted" in out
