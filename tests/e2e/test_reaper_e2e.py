"""End to end: `kill -9` of claude-mini still ends the process groups it started: a
running Bash call (the shell and its `sleep 300 &`), a running hook (likewise), and a stdio MCP
server with the child it started. Nothing of claude-mini runs on SIGKILL; the reaper does it
(claude_mini/reaper.py), then exits itself."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import cli_env, trust_folder, wait_for_mcp_servers
from tests.e2e.test_repl import wait_until
from tests.fake_anthropic import Reply
from tests.processes import alive, gone

# A stdio MCP server written for this test: it writes its pid and the pid of a `sleep 300` child
# it starts (which its own exit, when claude-mini's end closes its stdin, would leave running).
PID_SERVER = """
import os, subprocess, sys
from pathlib import Path
from mcp.server.mcpserver import MCPServer

child = subprocess.Popen(["sleep", "300"])
Path(sys.argv[1], "mcp-child.pid").write_text(str(child.pid))
Path(sys.argv[1], "mcp.pid").write_text(str(os.getpid()))
server = MCPServer("pids", log_level="WARNING")

@server.tool()
def ping() -> str:
    \"\"\"Answer pong.\"\"\"
    return "pong"

server.run("stdio")
"""

# The shell writes its own pid and its background child's, then waits: it is running when killed.
SLEEPER = "echo $$ > {pids}/{name}-shell.pid; sleep 300 & echo $! > {pids}/{name}-child.pid; sleep 300"


def reaper_pids(parent: int) -> list[int]:
    """The reaper processes `parent` started (matched by the script's name in their command line)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
            cmdline = (stat.parent / "cmdline").read_bytes()
        except OSError:
            continue
        if int(text[text.rfind(")") + 2 :].split()[1]) == parent and b"reaper.py" in cmdline:
            found.append(int(stat.parent.name))
    return found


@pytest.mark.usefixtures("no_sandbox")
@pytest.mark.parametrize("running", ["bash", "hook"])
def test_kill_9_ends_the_running_command_the_hook_and_the_mcp_server(
    isolated_env, fake_server, repo, tmp_path, running
):
    pids = tmp_path / "pids"
    pids.mkdir()
    server = tmp_path / "pid_server.py"
    server.write_text(PID_SERVER)
    trust_folder(isolated_env.home, repo)
    (repo / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"pids": {"command": sys.executable, "args": [str(server), str(pids)]}}})
    )
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.local.json").write_text(json.dumps({"enabledMcpjsonServers": ["pids"]}))
    settings: dict = {"recall": {"strategy": "off"}}
    if running == "hook":
        command = SLEEPER.format(pids=pids, name="hook")
        settings["hooks"] = {
            "UserPromptSubmit": [{"matcher": "", "hooks": [{"type": "command", "command": command, "timeout": 600}]}]
        }
    else:
        fake_server.on(Reply.tool("Bash", {"command": SLEEPER.format(pids=pids, name="bash")}), purpose="main")
    (repo / ".claude" / "settings.json").write_text(json.dumps(settings))
    wait_for_mcp_servers(repo)

    env = cli_env(isolated_env.home, isolated_env.managed, fake_server.base_url, CLAUDE_MINI_DISABLE_AUTO_MEMORY="1")
    proc = subprocess.Popen(
        [sys.executable, "-m", "claude_mini", "-p", "sleep a while", "--permission-mode", "bypassPermissions"],
        cwd=repo,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    names = ["mcp.pid", "mcp-child.pid", f"{running}-shell.pid", f"{running}-child.pid"]
    started: list[int] = []
    try:
        wait_until(lambda: all((pids / n).exists() and (pids / n).read_text().strip() for n in names), timeout=60)
        started = [int((pids / n).read_text()) for n in names]
        assert all(alive(pid) for pid in started)
        reapers = reaper_pids(proc.pid)
        proc.kill()
        proc.wait(timeout=30)
        wait_until(lambda: all(gone(pid) for pid in started), timeout=15)
        assert len(reapers) == 1  # one per claude-mini, however many groups it started
        wait_until(lambda: gone(reapers[0]), timeout=15)  # its job done, it is gone too
    finally:
        proc.kill()
        for pid in started:
            subprocess.run(["kill", "-9", str(pid)], capture_output=True)
