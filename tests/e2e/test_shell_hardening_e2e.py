"""End to end (real CLI, fake model): the model asks for a hostile Bash or Write call, and the file
system shows that nothing happened (issue 13, items 1, 2, 6 and 7)."""

from __future__ import annotations

import json
import subprocess

import pytest
from fake_anthropic import Reply


def user_settings(home, **data) -> None:
    (home / "settings.json").write_text(json.dumps(data))


def last_tool_result(fake_server, purpose: str = "main") -> dict:
    return fake_server.requests_for(purpose)[-1].body["messages"][-1]["content"][0]


@pytest.mark.parametrize(
    "command",
    ["sort -o {target}\ue0ff README.md", "git log --output={target}", "uniq README.md \u0661>/dev/null"],
)
def test_extraction_cannot_be_steered_into_a_writing_read_only_command(run_cli, fake_server, repo, command):
    """The background extraction fork runs read-only Bash unasked: conversation text can steer it."""
    target = repo.parent / "written-by-extraction"
    fake_server.on(Reply.text("Noted."), purpose="main")
    fake_server.on(Reply.tool("Bash", {"command": command.format(target=target)}), purpose="extract")
    fake_server.on(Reply.text("Nothing to save."), purpose="extract")
    result = run_cli("-p", "remember this")
    assert result.returncode == 0, result.stderr
    refused = last_tool_result(fake_server, "extract")
    assert refused["is_error"] and "read-only" in refused["content"]
    assert not target.exists()
    assert not (repo / "\u0661").exists()


@pytest.mark.parametrize(
    "command",
    # one per class; tests/agent/test_shell_hardening.py has the many variants of each
    ["echo 'touch pwned' | sh", "sh <<< 'touch pwned'", "python3 -c \"open('pwned', 'w')\"",
     "git -c alias.x='!touch pwned' x", "timeout 5 touch pwned", "t?uch pwned"],
)
def test_deny_rules_hold_whatever_the_line_wraps_them_in(run_cli, fake_server, repo, isolated_env, command):
    user_settings(isolated_env.home, permissions={"deny": ["Bash(touch:*)"]})
    fake_server.queue(Reply.tool("Bash", {"command": command}), Reply.text("done"))
    result = run_cli("-p", "make the file", "--permission-mode", "bypassPermissions")
    assert result.returncode == 0, result.stderr
    denied = last_tool_result(fake_server)
    assert denied["is_error"] and "Bash(touch:*)" in denied["content"], denied
    assert not (repo / "pwned").exists()


@pytest.mark.parametrize("command", ["cat .en?", "grep -r PASSWORD .", "git show :.env"])
def test_read_deny_rules_hold_for_bash_in_bypass_mode(run_cli, fake_server, repo, isolated_env, command):
    (repo / ".env").write_text("DB_PASSWORD=hunter2\n")
    if command.startswith("git show"):
        subprocess.run(["git", "add", "-f", ".env"], cwd=repo, check=True)
    user_settings(isolated_env.home, permissions={"deny": ["Read(.env)"]})
    fake_server.queue(Reply.tool("Bash", {"command": command}), Reply.text("done"))
    result = run_cli("-p", "show me", "--permission-mode", "bypassPermissions")
    assert result.returncode == 0, result.stderr
    denied = last_tool_result(fake_server)
    assert denied["is_error"] and "Read(.env)" in denied["content"]
    assert "hunter2" not in json.dumps(fake_server.requests_for("main")[-1].body)


def test_accept_edits_cannot_complete_a_bare_repository(run_cli, fake_server, repo):
    marker = repo.parent / "fsmonitor-ran"
    evil = repo / "vendor" / "evil"
    calls = [
        ("Write", {"file_path": str(evil / "objects" / "info" / "x"), "content": ""}),
        ("Write", {"file_path": str(evil / "refs" / "heads" / "x"), "content": ""}),
        ("Write", {"file_path": str(evil / "config"),
                   "content": f"[core]\n\tbare = true\n\tfsmonitor = touch {marker}\n"}),
        ("Write", {"file_path": str(evil / "HEAD"), "content": "ref: refs/heads/main\n"}),
    ]
    fake_server.queue(*(Reply.tool(name, data) for name, data in calls), Reply.text("done"))
    result = run_cli("-p", "set it up", "--permission-mode", "acceptEdits")
    assert result.returncode == 0, result.stderr
    denied = last_tool_result(fake_server)
    assert denied["is_error"] and "controls git" in denied["content"]
    assert not (evil / "HEAD").exists()
    assert not marker.exists()
