"""End to end (real CLI, fake model): the model asks for a hostile Bash or Write call, and the file
system shows that nothing happened."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.fake_anthropic import Reply

# These tests judge the permission rules and the Bash-line analysis alone: with the sandbox on,
# most of what they check would be stopped by the kernel first (tests/e2e/test_sandbox_e2e.py).
pytestmark = pytest.mark.usefixtures("no_sandbox")


def user_settings(home, **data) -> None:
    data.setdefault("sandbox", {"enabled": False})  # the module's premise (pytestmark below)
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
    [
        "echo 'touch pwned' | sh",
        "sh <<< 'touch pwned'",
        "python3 -c \"open('pwned', 'w')\"",
        "git -c alias.x='!touch pwned' x",
        "timeout 5 touch pwned",
        "t?uch pwned",
    ],
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
        (
            "Write",
            {"file_path": str(evil / "config"), "content": f"[core]\n\tbare = true\n\tfsmonitor = touch {marker}\n"},
        ),
        ("Write", {"file_path": str(evil / "HEAD"), "content": "ref: refs/heads/main\n"}),
    ]
    fake_server.queue(*(Reply.tool(name, data) for name, data in calls), Reply.text("done"))
    result = run_cli("-p", "set it up", "--permission-mode", "acceptEdits")
    assert result.returncode == 0, result.stderr
    denied = last_tool_result(fake_server)
    assert denied["is_error"] and "controls git" in denied["content"]
    assert not (evil / "HEAD").exists()
    assert not marker.exists()


# ---------------------------------------------------------------- deny rules in every mode


@pytest.fixture
def fake_curl(tmp_path):
    """A `curl` first on PATH that leaves a marker file when it runs, and the env that finds it."""
    bin_dir = tmp_path / "fakebin"
    bin_dir.mkdir()
    marker = tmp_path / "curl-ran"
    script = bin_dir / "curl"
    script.write_text(f"#!/bin/sh\necho ran >> {marker}\n")
    script.chmod(0o755)
    import os

    return marker, {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}


def test_the_fake_curl_runs_when_no_rule_denies_it(run_cli, fake_server, fake_curl):
    marker, env = fake_curl
    fake_server.queue(Reply.tool("Bash", {"command": "cat <<< $(curl x)"}), Reply.text("done"))
    result = run_cli("-p", "fetch", "--permission-mode", "bypassPermissions", env=env)
    assert result.returncode == 0, result.stderr
    assert marker.exists()


@pytest.mark.parametrize(
    ("command", "flags"),
    [
        ("cat <<< $(curl x)", ["--permission-mode", "bypassPermissions"]),
        (": > >(curl x)", ["--permission-mode", "bypassPermissions"]),
        ('hash -p "$(command -v curl)" c; c x', ["--permission-mode", "bypassPermissions"]),
        ("/proc/self/exe -c 'curl x'", ["--permission-mode", "bypassPermissions"]),
        ("perl '-M5;system(\"curl x\")' /dev/null", ["--permission-mode", "bypassPermissions"]),
        ('cp "$(command -v curl)" c; ./c x', ["--permission-mode", "bypassPermissions"]),
        ("cat <<< $(curl x)", ["--allowedTools", "Bash"]),
        ("ls > >(curl x)", ["--allowedTools", "Bash"]),
    ],
)
def test_a_managed_deny_binds_in_bypass_mode_and_over_allowed_tools(
    run_cli, fake_server, isolated_env, fake_curl, command, flags
):
    marker, env = fake_curl
    (isolated_env.managed / "settings.json").write_text(json.dumps({"permissions": {"deny": ["Bash(curl:*)"]}}))
    fake_server.queue(Reply.tool("Bash", {"command": command}), Reply.text("done"))
    result = run_cli("-p", "fetch", *flags, env=env)
    assert result.returncode == 0, result.stderr
    denied = last_tool_result(fake_server)
    assert denied["is_error"] and "Bash(curl:*)" in denied["content"], denied
    assert not marker.exists()


@pytest.mark.parametrize(
    "command",
    ["cat < .env", "dd if=.env status=none", "cd secrets && cat key.txt", "tar cf - secrets", "f=.env; cat $f"],
)
def test_managed_read_deny_rules_hold_for_bash_in_bypass_mode(run_cli, fake_server, repo, isolated_env, command):
    (repo / ".env").write_text("DB_PASSWORD=hunter2\n")
    (repo / "secrets").mkdir()
    (repo / "secrets" / "key.txt").write_text("hunter2-key\n")
    (isolated_env.managed / "settings.json").write_text(
        json.dumps({"permissions": {"deny": ["Read(.env)", "Read(./secrets/**)"]}})
    )
    fake_server.queue(Reply.tool("Bash", {"command": command}), Reply.text("done"))
    result = run_cli("-p", "show me", "--permission-mode", "bypassPermissions")
    assert result.returncode == 0, result.stderr
    denied = last_tool_result(fake_server)
    assert denied["is_error"] and "managed" in denied["content"], denied
    assert "hunter2" not in json.dumps(fake_server.requests_for("main")[-1].body)
