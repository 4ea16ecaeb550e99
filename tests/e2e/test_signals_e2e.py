"""End to end (a real process, not the fork server): SIGTERM or SIGHUP to claude-mini while the
Bash tool runs ends the tool's processes too, exits with 128 + the signal and one line, and leaves
a transcript that `-c` goes on from with every tool_use answered."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

import pytest

from claude_mini.session import UNFINISHED_TOOL
from tests.e2e.conftest import cli_env
from tests.e2e.test_repl import wait_until
from tests.fake_anthropic import Reply
from tests.processes import gone


@pytest.mark.usefixtures("no_sandbox")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_to_claude_mini_ends_the_running_tool(isolated_env, fake_server, repo, run_cli, sig):
    fake_server.queue(Reply.tool("Bash", {"command": "sleep 300 & echo $! > sleep.pid; wait"}))
    env = cli_env(isolated_env.home, isolated_env.managed, fake_server.base_url, CLAUDE_MINI_DISABLE_AUTO_MEMORY="1")
    proc = subprocess.Popen(
        [sys.executable, "-m", "claude_mini", "-p", "sleep a while", "--permission-mode", "bypassPermissions"],
        cwd=repo,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        pid_file = repo / "sleep.pid"
        wait_until(lambda: pid_file.exists() and pid_file.read_text().strip())
        sleep_pid = int(pid_file.read_text())
        proc.send_signal(sig)
        _, stderr = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 128 + sig, stderr
    wait_until(lambda: gone(sleep_pid))  # SIGKILL is delivered at once, the exit may take a moment
    [transcript] = isolated_env.home.glob("projects/*/*.jsonl")
    assert stderr.splitlines()[-1] == (
        f"claude-mini: ended by {sig.name} with the command it was running. "
        f"The transcript is saved; `claude-mini -r {transcript.stem}` continues."
    )
    assert all(json.loads(line) for line in transcript.read_text().splitlines())  # no line cut short
    fake_server.queue(Reply.text("Going on."))
    resumed = run_cli("-c", "-p", "go on", env={"CLAUDE_MINI_DISABLE_AUTO_MEMORY": "1"})
    assert resumed.returncode == 0 and resumed.stdout == "Going on.\n", resumed.stderr
    _, asked, answered = fake_server.requests_for("main")[-1].body["messages"]
    [call] = [b for b in asked["content"] if b["type"] == "tool_use"]
    result = answered["content"][0]
    assert result["tool_use_id"] == call["id"] and result["content"] == UNFINISHED_TOOL
