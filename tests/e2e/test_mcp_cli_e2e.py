"""End to end: `claude-mini mcp list|get|add|remove` through the real CLI, in Claude
Code's formats (.mcp.json, settings mcpServers), with trust and approval, and no secret printed."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.e2e.conftest import trust_folder, wait_for_mcp_servers

SECRET = "ghp_s3cretvalue"


def ok(result) -> str:
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_add_list_get_remove_in_a_trusted_repo(run_cli, repo, isolated_env):
    trust_folder(isolated_env.home, repo)
    out = ok(
        run_cli(
            "mcp",
            "add",
            "--scope",
            "project",
            "db",
            "-e",
            f"TOKEN={SECRET}",
            "PORT=5432",
            "--",
            "npx",
            "-y",
            "db-server",
            "--read-only",
        )
    )
    assert "Added stdio MCP server db" in out and str(repo.resolve() / ".mcp.json") in out
    ok(
        run_cli(
            "mcp",
            "add",
            "--transport",
            "http",
            "-s",
            "user",
            "api",
            "https://mcp.example.com/mcp",
            "-H",
            f"Authorization: Bearer {SECRET}",
        )
    )
    ok(run_cli("mcp", "add", "mine", "--", "python3", "server.py"))  # local, Claude Code's default scope

    mcp_json = (repo / ".mcp.json").read_text()
    assert json.loads(mcp_json) == {
        "mcpServers": {
            "db": {
                "type": "stdio",
                "command": "npx",
                "args": ["-y", "db-server", "--read-only"],
                "env": {"TOKEN": SECRET, "PORT": "5432"},
            }
        }
    }
    assert mcp_json.startswith('{\n  "mcpServers": {\n    "db": {\n      "type": "stdio"')
    user = json.loads((isolated_env.home / "settings.json").read_text())
    assert user["mcpServers"] == {
        "api": {"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"Authorization": f"Bearer {SECRET}"}}
    }
    local = json.loads((repo / ".claude" / "settings.local.json").read_text())
    assert local == {
        "enabledMcpjsonServers": ["db"],  # you added it: approved for you
        "mcpServers": {"mine": {"type": "stdio", "command": "python3", "args": ["server.py"], "env": {}}},
    }

    listing = run_cli("mcp", "list")
    assert ok(listing).splitlines() == [
        "api: https://mcp.example.com/mcp (http, user) - active",
        "db: npx -y db-server --read-only (stdio, project) - approved",
        "mine: python3 server.py (stdio, local) - active",
        "(Configuration only: this command does not connect; a session starts the servers.)",
    ]
    data = json.loads(ok(run_cli("mcp", "list", "--json")))
    assert [s["name"] for s in data["servers"]] == ["api", "db", "mine"]
    assert data["servers"][1]["env"] == {"TOKEN": "***", "PORT": "***"}

    got = ok(run_cli("mcp", "get", "api"))
    assert "  Headers: Authorization: ***" in got and "  URL: https://mcp.example.com/mcp" in got
    assert "Environment: TOKEN=*** PORT=***" in ok(run_cli("mcp", "get", "db"))
    for result in (listing, run_cli("mcp", "get", "api"), run_cli("mcp", "get", "db")):
        assert SECRET not in result.stdout + result.stderr

    assert "Removed MCP server db from the project scope" in ok(run_cli("mcp", "remove", "db"))
    assert json.loads((repo / ".mcp.json").read_text()) == {"mcpServers": {}}
    ok(run_cli("mcp", "remove", "api"))
    assert "mcpServers" in json.loads((isolated_env.home / "settings.json").read_text())
    assert [line.split(":")[0] for line in ok(run_cli("mcp", "list")).splitlines()[:-1]] == ["mine"]


def test_an_untrusted_repo_lists_its_servers_as_not_started(run_cli, repo, isolated_env):
    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"db": {"command": "npx", "args": ["db"]}}}))
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.local.json").write_text(json.dumps({"enableAllProjectMcpServers": True}))
    out = ok(run_cli("mcp", "list"))
    assert out.splitlines()[0] == (
        "db: npx db (stdio, project) - not started: this folder is not trusted; "
        "run claude-mini here and trust it, or pass --trust-folder"
    )
    assert "db: npx db (stdio, project) - approved" in ok(run_cli("mcp", "list", "--trust-folder"))


def test_a_project_server_nobody_approved_is_pending(run_cli, repo, isolated_env):
    trust_folder(isolated_env.home, repo)
    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"db": {"command": "npx"}, "broken": {"type": "http"}}}))
    out = ok(run_cli("mcp", "list"))
    local = repo.resolve() / ".claude" / "settings.local.json"
    assert (
        f'db: npx (stdio, project) - pending approval: add "db" to enabledMcpjsonServers in {local} to start it'
    ) in out
    assert "Problems (1):" in out and 'Skipped MCP server "broken"' in out and 'needs "url"' in out
    failed = run_cli("mcp", "get", "broken")
    assert failed.returncode == 1 and 'needs "url"' in failed.stderr


def test_bad_input_is_one_line(run_cli, repo, isolated_env):
    cases = [
        (("mcp", "add", "bad name", "--", "x"), 2, "invalid server name"),
        (("mcp", "add", "-t", "ws", "x", "y"), 2, "unknown transport"),
        (("mcp", "add", "-s", "team", "x", "y"), 2, "unknown scope"),
        (("mcp", "add", "x", "-e", "NOEQUALS", "--", "cmd"), 2, "write -e KEY=VALUE"),
        (("mcp", "add", "-t", "http", "x", "http://h", "-H", "nocolon"), 2, "write -H 'Name: value'"),
        (("mcp", "add", "-t", "http", "x", "--", "http://h", "extra"), 2, "takes a URL"),
        (("mcp", "get", "nope"), 1, 'no MCP server named "nope"'),
        (("mcp", "remove", "nope"), 1, 'no MCP server named "nope"'),
    ]
    for args, code, text in cases:
        result = run_cli(*args)
        assert result.returncode == code, (args, result.stderr)
        [line] = result.stderr.splitlines()
        assert line.startswith("claude-mini: ") and text in line, (args, line)
    assert not (repo / ".mcp.json").exists() and not (repo / ".claude").exists()


def test_a_name_already_there_or_in_several_scopes(run_cli, repo, isolated_env):
    ok(run_cli("mcp", "add", "-s", "user", "db", "--", "user-db"))
    ok(run_cli("mcp", "add", "db", "--", "local-db"))
    again = run_cli("mcp", "add", "-s", "user", "db", "--", "other")
    assert again.returncode == 1 and "already in" in again.stderr
    both = run_cli("mcp", "remove", "db")
    assert both.returncode == 1 and "several scopes (local, user)" in both.stderr
    ok(run_cli("mcp", "remove", "db", "--scope", "local"))
    assert "db: user-db (stdio, user) - active" in ok(run_cli("mcp", "list"))


def test_an_edit_keeps_the_files_other_keys_and_leaves_a_broken_one_alone(run_cli, repo, isolated_env):
    settings = isolated_env.home / "settings.json"
    settings.write_text(json.dumps({"model": "claude-opus-4-1", "permissions": {"allow": ["Read"]}}))
    ok(run_cli("mcp", "add", "-s", "user", "time", "--", "uvx", "mcp-server-time"))
    data = json.loads(settings.read_text())
    assert data["model"] == "claude-opus-4-1" and data["permissions"] == {"allow": ["Read"]}
    (repo / ".mcp.json").write_text("{oops")
    failed = run_cli("mcp", "add", "-s", "project", "db", "--", "npx")
    assert failed.returncode == 1 and "left unchanged" in failed.stderr
    assert (repo / ".mcp.json").read_text() == "{oops"


def test_list_check_connects_only_to_the_servers_a_session_would_start(run_cli, repo, isolated_env):
    demo = [sys.executable, str(Path(__file__).resolve().parents[1] / "mcp_servers" / "demo_server.py")]
    ok(run_cli("mcp", "add", "-s", "user", "demo", "--", *demo))
    ok(run_cli("mcp", "add", "-s", "user", "gone", "--", "/nonexistent/mcp-server"))
    wait_for_mcp_servers(repo, isolated_env.home / "settings.json")  # --check waits as a session does
    marker = repo / "started"  # the pending server would create it if it were started
    (repo / ".mcp.json").write_text(
        json.dumps(
            {"mcpServers": {"pending": {"command": sys.executable, "args": ["-c", f"open({str(marker)!r}, 'w')"]}}}
        )
    )
    trust_folder(isolated_env.home, repo)
    lines = ok(run_cli("mcp", "list", "--check")).splitlines()
    assert lines[0].startswith("demo: ") and lines[0].endswith("(stdio, user) - connected (7 tools)")
    assert lines[1].startswith("gone: /nonexistent/mcp-server (stdio, user) - failed: ")
    assert lines[2].startswith("pending: ") and "pending approval" in lines[2]
    assert not marker.exists()
    data = json.loads(ok(run_cli("mcp", "list", "--check", "--json")))
    assert [(s["name"], s["status"]) for s in data["servers"]] == [("demo", "connected"), ("gone", "failed")]
    assert "echo" in data["servers"][0]["tools"] and data["servers"][1]["error"]
