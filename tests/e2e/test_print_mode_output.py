"""End to end: print mode's output when things go wrong: a reader that closes stdout,
and a json result object whatever ended the turn."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pytest

from tests.e2e.conftest import cli_env, json_lines
from tests.fake_anthropic import Reply

# Loaded at interpreter start-up (PYTHONPATH): a bug in the agent loop, whatever the model sends.
BUG_IN_THE_LOOP = """
from claude_mini.agent import loop

async def run(self, text):
    raise RuntimeError("boom")
    yield

loop.Agent.run = run
"""


@pytest.mark.parametrize(("output_format", "lines_read"), [("text", 0), ("json", 0), ("stream-json", 1)])
def test_a_closed_stdout_ends_the_run_quietly(isolated_env, fake_server, repo, output_format, lines_read):
    """`claude-mini -p ... | head -N` once head has gone: no message, the status of a broken pipe
    (for stream-json, in the middle of the turn). A real process, as `| head` gives it."""
    env = cli_env(isolated_env.home, isolated_env.managed, fake_server.base_url)
    proc = subprocess.Popen(
        [sys.executable, "-m", "claude_mini", "-p", "hi", "--output-format", output_format],
        cwd=repo,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        for _ in range(lines_read):
            assert proc.stdout.readline()
        proc.stdout.close()  # the reader goes away
        err = proc.stderr.read()
        proc.wait(timeout=60)
    finally:
        proc.kill()
    assert err == ""
    assert proc.returncode == -signal.SIGPIPE  # 141 in a shell, as for `yes | head -1`


@pytest.mark.parametrize("output_format", ["json", "stream-json"])
def test_an_internal_error_still_ends_with_the_result_object(run_cli, repo, tmp_path, output_format):
    (tmp_path / "sitecustomize.py").write_text(BUG_IN_THE_LOOP)
    result = run_cli("-p", "hi", "--output-format", output_format, env={"PYTHONPATH": str(tmp_path)})
    assert result.returncode == 1
    last = json_lines(result.stdout)[-1]
    assert last["type"] == "result" and last["is_error"] is True
    assert last["subtype"] == "error_during_execution" and last["result"] == "internal error: RuntimeError: boom"
    assert "session_id" in last and "usage" in last
    [line] = result.stderr.splitlines()  # and the one line for whoever reads stderr
    assert line.startswith("claude-mini: internal error: RuntimeError: boom.") and "Traceback" not in line


def test_ctrl_c_during_the_turn_still_prints_the_result_object(isolated_env, fake_server, repo):
    fake_server.queue(Reply.text("never sent").hang())
    env = cli_env(isolated_env.home, isolated_env.managed, fake_server.base_url)
    proc = subprocess.Popen(
        [sys.executable, "-m", "claude_mini", "-p", "hi", "--output-format", "json"],
        cwd=repo,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not fake_server.requests_for("main"):  # the turn is under way
            assert time.monotonic() < deadline and proc.poll() is None, proc.stderr.read()
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode != 0
    result = json.loads(out)
    assert result["type"] == "result" and result["is_error"] is True
    assert result["subtype"] == "error_during_execution" and "nterrupted" in result["result"]


def test_debug_prints_one_line_per_request_and_no_key(run_cli):
    """--debug shows request details, as its help says; never the key."""
    result = run_cli("-p", "hi", "--debug", env={"ANTHROPIC_API_KEY": "sk-secret-value"})
    assert result.returncode == 0, result.stderr
    [line] = [line for line in result.stderr.splitlines() if "purpose=main" in line]
    assert line.startswith("claude-mini: debug: POST http://127.0.0.1:") and "/v1/messages" in line
    assert "-> 200 request-id=" in line and "sk-secret-value" not in result.stderr
    quiet = run_cli("-p", "hi")
    assert "debug:" not in quiet.stderr
