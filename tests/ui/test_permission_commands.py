"""/permissions adding rules to the session or to the settings file the user picks, and "don't ask
again" saving its rule to the local file (git-ignored the first time it is created)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from claude_mini.config import load_config
from claude_mini.config.git_ignore import LOCAL_SETTINGS_PATTERN
from claude_mini.permissions import Allow, Ask, Deny
from claude_mini.runtime import build_runtime
from claude_mini.ui import commands
from claude_mini.ui.permission_commands import WHERE_MENU, remember_allow
from tests.ui.conftest import FakeHost, StubClient, make_console


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """git's global ignore file under a fresh HOME (never the real one)."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in ("XDG_CONFIG_HOME", "GIT_CONFIG_GLOBAL"):
        monkeypatch.delenv(name, raising=False)
    return home


def session(repo: Path, *, trusted: bool = True, choice: str | None = None) -> SimpleNamespace:
    runtime = build_runtime(load_config(repo, trust_folder=trusted), client=StubClient())
    host = FakeHost(choice)

    async def get_runtime():
        return runtime

    def run(line: str) -> str:
        console = make_console(400)
        asyncio.run(commands.run_command(line, host, console, get_runtime, commands.session_table(runtime)))
        return console.file.getvalue()

    return SimpleNamespace(run=run, host=host, runtime=runtime)


@pytest.mark.usefixtures("no_sandbox", "home")
def test_a_rule_goes_to_the_file_picked_in_the_menu_and_binds_now_and_in_the_next_session(repo):
    first = session(repo, choice="local")
    out = first.run("/permissions allow Bash(npm test)")
    assert first.host.choices == [WHERE_MENU]
    local = repo / ".claude" / "settings.local.json"
    assert f"Added Bash(npm test) to {local} (permissions.allow)" in out
    assert json.loads(local.read_text()) == {"permissions": {"allow": ["Bash(npm test)"]}}
    assert isinstance(first.runtime.policy.can_use_tool("Bash", {"command": "npm test"}), Allow)
    second = session(repo)
    assert isinstance(second.runtime.policy.can_use_tool("Bash", {"command": "npm test"}), Allow)
    assert "Removed Bash(npm test) from" in second.run("/permissions remove Bash(npm test)")
    assert json.loads(local.read_text()) == {"permissions": {"allow": []}}


@pytest.mark.usefixtures("home")
def test_deny_to_the_user_file_without_a_menu_and_a_dismissed_menu_changes_nothing(repo, isolated_env):
    s = session(repo)
    out = s.run("/permissions deny user Read(secrets/**)")
    user = isolated_env.home / "settings.json"
    assert f"Added Read(secrets/**) to {user} (permissions.deny)" in out and s.host.choices == []
    assert json.loads(user.read_text()) == {"permissions": {"deny": ["Read(secrets/**)"]}}
    assert isinstance(s.runtime.policy.can_use_tool("Read", {"file_path": "secrets/key"}), Deny)
    assert "Not changed." in s.run("/permissions ask Bash(git push:*)")  # the menu answered None
    assert "Not changed:" in s.run("/permissions allow local Bash(unclosed")
    assert not (repo / ".claude").exists()


def test_an_untrusted_folder_refuses_its_own_files_but_takes_the_session(repo):
    s = session(repo, trusted=False)
    assert "Not changed: this folder is not trusted" in s.run("/permissions allow project Edit")
    assert "for this session" in s.run("/permissions ask session WebFetch")
    assert isinstance(s.runtime.policy.can_use_tool("WebFetch", {"url": "https://x"}), Ask)
    assert not (repo / ".claude").exists()


@pytest.mark.usefixtures("no_sandbox")
def test_dont_ask_again_saves_to_the_local_file_and_git_ignores_it_once(repo, home):
    s = session(repo)
    line = remember_allow(s.runtime, "Bash(make lint)")
    assert "settings.local.json" in line and "later sessions" in line
    assert LOCAL_SETTINGS_PATTERN in line and (home / ".config" / "git" / "ignore").read_text().count("settings") == 1
    assert "git" not in remember_allow(s.runtime, "Bash(make test)")  # created already: said once
    assert json.loads((repo / ".claude" / "settings.local.json").read_text()) == {
        "permissions": {"allow": ["Bash(make lint)", "Bash(make test)"]}
    }
    untrusted = session(repo, trusted=False)
    assert "for this session only" in remember_allow(untrusted.runtime, "Bash(make docs)")
    assert "Bash(make docs)" not in (repo / ".claude" / "settings.local.json").read_text()
