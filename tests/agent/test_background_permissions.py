"""Background shells under the permission rules: a Bash call with run_in_background is decided like
any Bash call; BashOutput and KillShell run unasked in every mode, and rules naming them bind."""

from __future__ import annotations

from pathlib import Path

import pytest

from claude_mini.permissions import Allow, Ask, Deny

from .policies import policy


def background(command: str) -> dict[str, object]:
    return {"command": command, "run_in_background": True}


@pytest.mark.parametrize("mode", ["default", "acceptEdits", "plan"])
def test_run_in_background_changes_no_decision(root: Path, mode: str) -> None:
    p = policy(root, ("project", {"deny": ["Bash(rm:*)"], "allow": ["Bash(npm run dev)"]}), mode=mode)
    for command in ("rm -rf build", "npm run dev", "npm install", "git status"):
        plain, started = p.can_use_tool("Bash", {"command": command}), p.can_use_tool("Bash", background(command))
        assert type(plain) is type(started), (mode, command)
    assert isinstance(p.can_use_tool("Bash", background("rm -rf build")), Deny)


@pytest.mark.parametrize("mode", ["default", "acceptEdits", "plan", "bypassPermissions"])
def test_bashoutput_and_killshell_run_unasked(root: Path, mode: str) -> None:
    p = policy(root, mode=mode)
    assert isinstance(p.can_use_tool("BashOutput", {"bash_id": "bash_1"}), Allow)
    assert isinstance(p.can_use_tool("KillShell", {"shell_id": "bash_1"}), Allow)


def test_rules_naming_them_bind(root: Path) -> None:
    p = policy(root, ("user", {"deny": ["KillShell"], "ask": ["BashOutput"]}))
    assert isinstance(p.can_use_tool("KillShell", {"shell_id": "bash_1"}), Deny)
    assert isinstance(p.can_use_tool("BashOutput", {"bash_id": "bash_1"}), Ask)
    assert not p.errors  # Claude Code's names are known names
